package vfs_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/ttlstore/ttlstore/internal/vfs"
)

// Publishing a file safely: write it under a temporary name, sync it,
// rename it over the old one and sync the directory. A crash before the
// last step finds the old file; one after it finds the new one.
func ExampleMemFS_Crash() {
	m := vfs.NewMemFS()
	_ = m.MkdirAll("db")
	publish := func(data string, syncDir bool) {
		f, _ := m.Create("db/snap.tmp")
		_, _ = f.Write([]byte(data))
		_ = f.Sync()
		_ = f.Close()
		_ = m.Rename("db/snap.tmp", "db/snap")
		if syncDir {
			_ = m.SyncDir("db")
		}
	}
	publish("v1", true)
	publish("v2", false) // power fails before SyncDir

	after := m.Crash(rand.New(rand.NewPCG(1, 1)), true)
	snap, _ := after.ReadFile("db/snap")
	names, _ := after.List("db")
	fmt.Printf("%s %q\n", snap, names)

	_, err := m.List("db")
	fmt.Println(err)
	// Output:
	// v1 ["snap"]
	// list db: vfs: file system crashed
}

// Failing every operation of a piece of code in turn: run it once to count
// its operations, then once per operation with that one failing.
func ExampleFailNth() {
	run := func(fsys vfs.FS) error {
		f, err := fsys.Create("log")
		if err != nil {
			return err
		}
		if _, err := f.Write([]byte("record")); err != nil {
			return err
		}
		return f.Sync()
	}
	m := vfs.NewMemFS()
	_ = run(m)
	for k := int64(1); k <= m.Ops(); k++ {
		m := vfs.NewMemFS()
		m.SetHook(vfs.FailNth(k, nil))
		fmt.Println(k, run(m))
	}
	// Output:
	// 1 create log: vfs: injected fault
	// 2 write log: vfs: injected fault
	// 3 sync log: vfs: injected fault
}
