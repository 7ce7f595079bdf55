package ttlstore_test

import (
	"errors"
	"fmt"

	"github.com/ttlstore/ttlstore"
)

func ExampleCollection_ReadIn() {
	c, _ := ttlstore.New(ttlstore.Options{PartitionKeyPath: "/tenant", Clock: exampleClock()})
	defer c.Close()
	c.Upsert(`{"id":"s1","tenant":"acme","user":"ann"}`)
	c.Upsert(`{"id":"s1","tenant":"globex","user":"bob"}`) // the same id in another partition

	d, _ := c.ReadIn(ttlstore.PartitionKeyString("globex"), "s1")
	fmt.Println(d.ID(), d.PartitionKey(), c.Len())
	_, err := c.Read("s1")
	fmt.Println(errors.Is(err, ttlstore.ErrPartitionKeyRequired))
	_, err = c.ReadIn(ttlstore.PartitionKeyString("initech"), "s1")
	fmt.Println(err)
	// Output:
	// s1 "globex" 2
	// true
	// ttlstore: read "s1" in partition "initech": not found
}

func ExampleCollection_DeletePartition() {
	c, _ := ttlstore.New(ttlstore.Options{PartitionKeyPath: "/tenant", Clock: exampleClock(), SweepInterval: ttlstore.ManualSweep})
	defer c.Close()
	for _, doc := range []string{
		`{"id":"s1","tenant":"acme"}`, `{"id":"s2","tenant":"acme"}`, `{"id":"s1","tenant":"globex"}`,
	} {
		c.Upsert(doc)
	}
	acme := ttlstore.PartitionKeyString("acme")
	c.DeletePartition(acme)                 // hidden at once
	c.Upsert(`{"id":"s3","tenant":"acme"}`) // a write after it is not affected
	for d := range c.AllIn(acme) {
		fmt.Println("acme:", d.ID())
	}
	fmt.Println(c.Len(), c.Stats().Deleted)
	fmt.Println(c.Sweep(), c.Stats().Deleted) // the sweeper removes them
	// Output:
	// acme: s3
	// 2 2
	// 2 0
}

func ExampleBatch_In() {
	c, _ := ttlstore.New(ttlstore.Options{PartitionKeyPath: "/tenant", Clock: exampleClock()})
	defer c.Close()
	acme := ttlstore.PartitionKeyString("acme")
	b := new(ttlstore.Batch).In(acme).
		Create(`{"id":"order-1","tenant":"acme","total":10}`).
		Create(`{"id":"line-1","tenant":"acme","order":"order-1"}`)
	docs, err := c.ExecuteBatch(b)
	fmt.Println(len(docs), err)

	_, err = c.ExecuteBatch(new(ttlstore.Batch).In(acme).Create(`{"id":"x","tenant":"globex"}`))
	fmt.Println(err)
	// Output:
	// 2 <nil>
	// ttlstore: batch operation 0: create "x" in partition "globex": the document's partition key is "globex", not "acme" as the call names: invalid document; no operation applied
}
