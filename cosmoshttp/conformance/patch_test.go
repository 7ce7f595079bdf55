package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

const patchBase = `{"pk":"p","n":1,"f":1.5,"s":"x","arr":[1,2],"obj":{"k":1},"gone":true}`

func TestPatch(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	type op func(p *azcosmos.PatchOperations)
	cases := []struct {
		name   string
		ops    []op
		cond   string
		status int
		path   string // top-level property to compare after a success
		want   string // its JSON; "" = absent
	}{
		{"add new property", []op{func(p *azcosmos.PatchOperations) { p.AppendAdd("/new", 5) }}, "", 200, "new", `5`},
		{"add replaces an existing property", []op{func(p *azcosmos.PatchOperations) { p.AppendAdd("/s", "y") }}, "", 200, "s", `"y"`},
		{"add inserts at an array index", []op{func(p *azcosmos.PatchOperations) { p.AppendAdd("/arr/1", 9) }}, "", 200, "arr", `[1,9,2]`},
		{"add appends with -", []op{func(p *azcosmos.PatchOperations) { p.AppendAdd("/arr/-", 7) }}, "", 200, "arr", `[1,2,7]`},
		{"set overwrites", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/s", "y") }}, "", 200, "s", `"y"`},
		{"set creates nested", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/obj/k2", true) }}, "", 200, "obj", `{"k":1,"k2":true}`},
		{"set an object", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/o2", map[string]any{"z": 1}) }}, "", 200, "o2", `{"z":1}`},
		{"set an array element", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/arr/0", 5) }}, "", 200, "arr", `[5,2]`},
		{"replace existing", []op{func(p *azcosmos.PatchOperations) { p.AppendReplace("/s", "z") }}, "", 200, "s", `"z"`},
		{"replace missing 400", []op{func(p *azcosmos.PatchOperations) { p.AppendReplace("/missing", 1) }}, "", 400, "", ""},
		{"remove existing", []op{func(p *azcosmos.PatchOperations) { p.AppendRemove("/gone") }}, "", 200, "gone", ""},
		{"remove array element", []op{func(p *azcosmos.PatchOperations) { p.AppendRemove("/arr/0") }}, "", 200, "arr", `[2]`},
		{"remove missing 400", []op{func(p *azcosmos.PatchOperations) { p.AppendRemove("/missing") }}, "", 400, "", ""},
		{"incr integer", []op{func(p *azcosmos.PatchOperations) { p.AppendIncrement("/n", 5) }}, "", 200, "n", `6`},
		{"incr negative", []op{func(p *azcosmos.PatchOperations) { p.AppendIncrement("/n", -3) }}, "", 200, "n", `-2`},
		{"incr float", []op{func(p *azcosmos.PatchOperations) { p.AppendIncrement("/f", 1) }}, "", 200, "f", `2.5`},
		{"incr missing creates", []op{func(p *azcosmos.PatchOperations) { p.AppendIncrement("/c", 3) }}, "", 200, "c", `3`},
		{"incr a string 400", []op{func(p *azcosmos.PatchOperations) { p.AppendIncrement("/s", 1) }}, "", 400, "", ""},
		{"set under a missing parent 400", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/no/such", 1) }}, "", 400, "", ""},
		{"several ops in order", []op{
			func(p *azcosmos.PatchOperations) { p.AppendSet("/m", 1) },
			func(p *azcosmos.PatchOperations) { p.AppendIncrement("/m", 1) },
			func(p *azcosmos.PatchOperations) { p.AppendReplace("/m", 10) },
		}, "", 200, "m", `10`},
		{"atomic: a failing op applies none", []op{
			func(p *azcosmos.PatchOperations) { p.AppendSet("/s", "changed") },
			func(p *azcosmos.PatchOperations) { p.AppendRemove("/missing") },
		}, "", 400, "", ""},
		{"condition true", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/s", "y") }}, "from c where c.n = 1", 200, "s", `"y"`},
		{"condition false 412", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/s", "y") }}, "from c where c.n = 2", 412, "", ""},
		{"condition on a missing property 412", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/s", "y") }}, "from c where c.nope = 1", 412, "", ""},
		{"condition syntax error 400", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/s", "y") }}, "from c where", 400, "", ""},
		{"condition with a JOIN 400", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/s", "y") }}, "from c join t in c.arr where t = 1", 400, "", ""},
		{"add past the array's end 400", []op{func(p *azcosmos.PatchOperations) { p.AppendAdd("/arr/5", 1) }}, "", 400, "", ""},
		{"remove past the array's end 400", []op{func(p *azcosmos.PatchOperations) { p.AppendRemove("/arr/5") }}, "", 400, "", ""},
		{"empty path 400", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("", 1) }}, "", 400, "", ""},
		{"11 operations 400", func() []op {
			var ops []op
			for i := 0; i < 11; i++ {
				ops = append(ops, func(p *azcosmos.PatchOperations) { p.AppendIncrement("/n", 1) })
			}
			return ops
		}(), "", 400, "", ""},
		{"10 operations", func() []op {
			var ops []op
			for i := 0; i < 10; i++ {
				ops = append(ops, func(p *azcosmos.PatchOperations) { p.AppendIncrement("/n", 1) })
			}
			return ops
		}(), "", 200, "n", `11`},
		{"set partition key 400", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/pk", "q") }}, "", 400, "", ""},
		{"replace partition key 400", []op{func(p *azcosmos.PatchOperations) { p.AppendReplace("/pk", "q") }}, "", 400, "", ""},
		{"remove partition key 400", []op{func(p *azcosmos.PatchOperations) { p.AppendRemove("/pk") }}, "", 400, "", ""},
		{"set id 400", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/id", "other") }}, "", 400, "", ""},
		{"set ttl string 400 (R6)", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/ttl", "10") }}, "", 400, "", ""},
		{"add ttl 1.5 400 (R6)", []op{func(p *azcosmos.PatchOperations) { p.AppendAdd("/ttl", 1.5) }}, "", 400, "", ""},
		{"set ttl null 400 (R6)", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/ttl", nil) }}, "", 400, "", ""},
		{"set ttl 0 400 (R6)", []op{func(p *azcosmos.PatchOperations) { p.AppendSet("/ttl", 0) }}, "", 400, "", ""},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("d%02d", i)
			var before doc
			json.Unmarshal([]byte(patchBase), &before)
			before["id"] = id
			create(t, c, pkP, before)
			orig, _ := read(t, c, pkP, id)
			p := azcosmos.PatchOperations{}
			for _, o := range tc.ops {
				o(&p)
			}
			if tc.cond != "" {
				p.SetCondition(tc.cond)
			}
			r, err := c.PatchItem(ctx, pkP, id, p, &azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
			got := status(err)
			if err == nil {
				got = r.RawResponse.StatusCode
			}
			if got != tc.status {
				t.Fatalf("status %d, want %d (err %v)", got, tc.status, err)
			}
			after, _ := read(t, c, pkP, id)
			if tc.status != 200 {
				a, _ := json.Marshal(after)
				o, _ := json.Marshal(orig)
				if string(a) != string(o) {
					t.Errorf("a refused patch changed the item:\n%s\nwas\n%s", a, o)
				}
				return
			}
			if body := parse(t, r.Value); body["_etag"] != after["_etag"] {
				t.Errorf("response body %s is not the stored item %v", r.Value, after)
			}
			v, ok := after[tc.path]
			if tc.want == "" {
				if ok {
					t.Errorf("%s = %v, want absent", tc.path, v)
				}
				return
			}
			b, _ := json.Marshal(v)
			if string(b) != tc.want {
				t.Errorf("%s = %s, want %s", tc.path, b, tc.want)
			}
			if after["_etag"] == orig["_etag"] {
				t.Errorf("_etag unchanged by a patch (R3)")
			}
		})
	}
	t.Run("missing item 404", func(t *testing.T) {
		p := azcosmos.PatchOperations{}
		p.AppendSet("/s", 1)
		_, err := c.PatchItem(ctx, pkP, "nope", p, nil)
		wantStatus(t, "patch nope", err, http.StatusNotFound)
	})
}

// TestPatchTTL: a patch of /ttl changes expiry, counted from the patch's
// _ts (R3, R5).
func TestPatchTTL(t *testing.T) {
	cases := []struct {
		name   string
		def    *int32
		first  string
		op     func(p *azcosmos.PatchOperations)
		checks map[float64]bool // base+seconds: alive; the patch is at 2.5
	}{
		{"set ttl shortens", ttlp(-1), `{"id":"x","pk":"p"}`, func(p *azcosmos.PatchOperations) { p.AppendSet("/ttl", 5) },
			map[float64]bool{6.999: true, 7: false}},
		{"add ttl -1 stops expiry", ttlp(10), `{"id":"x","pk":"p"}`, func(p *azcosmos.PatchOperations) { p.AppendAdd("/ttl", -1) },
			map[float64]bool{500: true}},
		{"remove ttl inherits defaultTtl", ttlp(10), `{"id":"x","pk":"p","ttl":100}`, func(p *azcosmos.PatchOperations) { p.AppendRemove("/ttl") },
			map[float64]bool{11.999: true, 12: false}},
		{"incr ttl", ttlp(-1), `{"id":"x","pk":"p","ttl":5}`, func(p *azcosmos.PatchOperations) { p.AppendIncrement("/ttl", 10) },
			map[float64]bool{16.999: true, 17: false}},
		{"ttl under defaultTtl off means nothing", nil, `{"id":"x","pk":"p"}`, func(p *azcosmos.PatchOperations) { p.AppendSet("/ttl", 1) },
			map[float64]bool{500: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, cosmoshttp.Options{})
			c := e.container("c", tc.def)
			if _, err := c.CreateItem(ctx, pkP, []byte(tc.first), nil); err != nil {
				t.Fatal(err)
			}
			e.at(2.5)
			p := azcosmos.PatchOperations{}
			tc.op(&p)
			if _, err := c.PatchItem(ctx, pkP, "x", p, nil); err != nil {
				t.Fatalf("patch: %v", err)
			}
			var times []float64
			for at := range tc.checks {
				times = append(times, at)
			}
			sortFloats(times)
			for _, at := range times {
				e.at(at)
				expectAlive(t, c, "x", tc.checks[at], "at base+"+jsonString(at))
			}
		})
	}
}

func sortFloats(f []float64) {
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && f[j] < f[j-1]; j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
