// Command carts keeps shopping carts that expire 30 minutes after their
// last change, with patch and transactional batch: adding an item is a
// patch (no read, decode, encode and conditional replace), a quantity is
// counted with incr, exact on integers, and checking out moves the cart
// into an order and takes the stock, all or nothing, in one batch. A
// checkout that asks for more than the stock changes nothing, and the
// error says which operation refused. Carts, orders and stock share one
// partition per shop (PartitionKeyPath "/shop"), as Cosmos DB requires of a
// transactional batch.
//
// It runs on a mock clock, so that the half hour passes at once, and exits
// non-zero if the store does not behave as described.
package main

import (
	"errors"
	"fmt"
	"log"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ttlstore/ttlstore"
)

const shop = "north"

var pk = ttlstore.PartitionKeyString(shop)

// addItem adds one of an item to a cart, as one patch: the item's count is
// created at 1 or incremented.
func addItem(c *ttlstore.Collection, cart, item string) error {
	ops, err := ttlstore.ParsePatch([]byte(`[{"op":"incr","path":"/items/` + item + `","value":1}]`))
	if err != nil {
		return err
	}
	_, err = c.PatchIn(pk, cart, ops)
	return err
}

// checkout turns a cart into an order and takes its items from the stock,
// on the condition that neither changed since they were read: one batch.
func checkout(c *ttlstore.Collection, cart string) error {
	d, err := c.ReadIn(pk, cart)
	if err != nil {
		return err
	}
	var v struct {
		Items map[string]int `json:"items"`
	}
	if err := d.Decode(&v); err != nil {
		return err
	}
	stock, err := c.ReadIn(pk, "stock")
	if err != nil {
		return err
	}
	var have map[string]any
	if err := stock.Decode(&have); err != nil {
		return err
	}
	b := ttlstore.Batch{}
	b.In(pk)
	var take []ttlstore.PatchOp
	for item, n := range v.Items {
		if left, _ := have[item].(float64); int(left) < n {
			return fmt.Errorf("checkout %s: %d %s wanted, %d in stock: %w", cart, n, item, int(left), errOutOfStock)
		}
		take = append(take, ttlstore.PatchOp{Kind: ttlstore.PatchIncr, Path: "/" + item, Value: []byte(strconv.Itoa(-n))})
	}
	b.PatchIfMatch("stock", take, stock.ETag()).
		DeleteIfMatch(cart, d.ETag()).
		Create(fmt.Sprintf(`{"id":"order-%s","shop":%q,"ttl":-1,"items":%s}`, cart, shop, itemsJSON(v.Items)))
	_, err = c.ExecuteBatch(&b)
	return err
}

var errOutOfStock = errors.New("out of stock")

// itemsJSON is items as a JSON object, its keys in order.
func itemsJSON(items map[string]int) string {
	s := "{"
	for _, k := range slices.Sorted(maps.Keys(items)) {
		if len(s) > 1 {
			s += ","
		}
		s += strconv.Quote(k) + ":" + strconv.Itoa(items[k])
	}
	return s + "}"
}

func main() {
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	c, err := ttlstore.New(ttlstore.Options{
		DefaultTTL:       ttlstore.TTL(30 * 60), // a cart expires 30 minutes after its last change
		PartitionKeyPath: "/shop",
		Clock:            clk,
		SweepInterval:    ttlstore.ManualSweep,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	must := func(err error) {
		if err != nil {
			log.Fatal(err)
		}
	}
	_, err = c.Create(`{"id":"stock","shop":"north","ttl":-1,"tea":5,"cup":1}`)
	must(err)
	for _, cart := range []string{"ada", "bob"} {
		_, err = c.Create(fmt.Sprintf(`{"id":%q,"shop":"north","items":{}}`, cart))
		must(err)
	}
	must(addItem(c, "ada", "tea"))
	must(addItem(c, "ada", "tea"))
	must(addItem(c, "ada", "cup"))
	must(addItem(c, "bob", "cup"))
	must(addItem(c, "bob", "cup"))

	must(checkout(c, "ada"))
	var order struct {
		Items map[string]int `json:"items"`
	}
	d, err := c.ReadIn(pk, "order-ada")
	must(err)
	must(d.Decode(&order))
	var stock map[string]any
	d, err = c.ReadIn(pk, "stock")
	must(err)
	must(d.Decode(&stock))
	if order.Items["tea"] != 2 || order.Items["cup"] != 1 || stock["tea"] != 3.0 || stock["cup"] != 0.0 {
		log.Fatalf("after ada's checkout: order %v, stock %v", order.Items, stock)
	}
	fmt.Println("ada's order:", itemsJSON(order.Items), "- stock left: tea", stock["tea"], "cup", stock["cup"])

	// Bob wants two cups and one is left: his checkout is refused.
	if err := checkout(c, "bob"); !errors.Is(err, errOutOfStock) {
		log.Fatalf("bob's checkout: %v, want out of stock", err)
	}
	fmt.Println("bob: out of stock, cart kept")

	// A checkout that lost a race: the stock changed after it was read.
	b := ttlstore.Batch{}
	b.In(pk)
	b.PatchIfMatch("stock", []ttlstore.PatchOp{{Kind: ttlstore.PatchIncr, Path: "/cup", Value: []byte("-1")}}, `"stale"`).
		Delete("bob")
	_, err = c.ExecuteBatch(&b)
	var be *ttlstore.BatchError
	if !errors.As(err, &be) || be.Index != 0 || !errors.Is(err, ttlstore.ErrPreconditionFailed) {
		log.Fatalf("stale checkout: %v, want operation 0 to fail its If-Match", err)
	}
	if _, err := c.ReadIn(pk, "bob"); err != nil {
		log.Fatalf("bob's cart after a refused batch: %v", err)
	}
	fmt.Println("stale checkout: refused at operation", be.Index, "- nothing applied")

	// Half an hour later Bob's cart has expired; the order and the stock
	// have no ttl and stay.
	clk.Add(30 * time.Minute)
	if _, err := c.ReadIn(pk, "bob"); !errors.Is(err, ttlstore.ErrNotFound) {
		log.Fatalf("bob's cart after 30 minutes: %v, want ErrNotFound", err)
	}
	if _, err := c.ReadIn(pk, "order-ada"); err != nil {
		log.Fatal(err)
	}
	fmt.Println("after 30 minutes: bob's cart expired, ada's order kept;", c.Sweep(), "swept")
}
