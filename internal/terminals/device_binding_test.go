package terminals_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/terminals/cardgateway"
	"github.com/payd/payd/internal/terminals/simulator"
)

// TestDeviceBinding: an encrypted card read taken on one terminal cannot be
// replayed on another terminal, of the same merchant or another one. A
// terminal is bound to its device at activation (or by its first read), a
// device is bound to one terminal in the whole system, and a KSN is accepted
// once whichever terminal submits it; two terminals racing with one read:
// exactly one wins.
func TestDeviceBinding(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		h := newHarness(t, e)
		other, err := e.Main.Merchants.Create(context.Background(), merchants.CreateParams{Name: "Other merchant"})
		if err != nil {
			t.Fatal(err)
		}
		b := binder{h: h, otherKey: other.SecretKeys[0]}
		for _, model := range terminals.Models {
			t.Run(string(model), func(t *testing.T) {
				t.Run("bound at activation", func(t *testing.T) { b.testBoundAtActivation(t, model) })
				t.Run("replay on another merchant's terminal", func(t *testing.T) { b.testReplayElsewhere(t, model) })
				t.Run("KSN once across the system", func(t *testing.T) { b.testKSNOnce(t, model) })
				t.Run("race between two terminals", func(t *testing.T) { b.testRace(t, model) })
				t.Run("another merchant's device", func(t *testing.T) { b.testOtherMerchantsDevice(t, model) })
			})
		}
		if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
			t.Fatal(err)
		}
	})
}

type binder struct {
	h        *harness
	otherKey string // a secret key of a second merchant
}

// terminal registers and activates a terminal with key ("" for the first
// merchant's), bound to the device named dev when dev is not "".
func (b binder) terminal(t *testing.T, key string, model terminals.Model, dev string) string {
	t.Helper()
	r := b.h.do(t, apptest.Request{Method: "POST", Path: "/v1/terminals", Key: key,
		Body: map[string]any{"serial_number": "SN-" + newKey(), "model": string(model)}})
	if r.Status != 201 {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	id := r.Map(t)["id"].(string)
	var body any
	if dev != "" {
		initial, err := simulator.InitialKSN(model, dev)
		if err != nil {
			t.Fatal(err)
		}
		body = map[string]any{"ksn": initial.String()}
	}
	if r := b.activate(t, key, id, body); r.Status != 200 || r.Map(t)["status"] != "active" {
		t.Fatalf("activate %v: %d %s", body, r.Status, r.Body)
	}
	return id
}

func (b binder) activate(t *testing.T, key, id string, body any) *apptest.Response {
	t.Helper()
	return b.h.do(t, apptest.Request{Method: "POST", Path: "/v1/terminals/" + id + "/activate", Key: key, Body: body})
}

func (b binder) pay(t *testing.T, key, termID string, body map[string]any) *apptest.Response {
	t.Helper()
	return b.h.do(t, apptest.Request{Method: "POST", Path: "/v1/terminals/" + termID + "/payments", Key: key, Body: body,
		Headers: map[string]string{"Idempotency-Key": newKey()}})
}

// read encrypts a fresh approved chip read on the named device at counter.
func (b binder) read(t *testing.T, model terminals.Model, dev string, counter uint32) map[string]any {
	t.Helper()
	return b.h.payment(t, b.h.device(t, model, dev, counter), cardgateway.CardApproved, 700, readOpts{})
}

func (b binder) testBoundAtActivation(t *testing.T, model terminals.Model) {
	dev, intruder := "dev-"+newKey(), "dev-"+newKey()
	id := b.terminal(t, "", model, dev)
	if w := b.h.written(t, id); w.keyID == "" {
		t.Fatal("activation with the device's KSN did not bind the terminal")
	}
	// Before any payment, a read of another device is refused: the terminal
	// does not adopt the first device it sees.
	b.h.requireNothingWritten(t, id, func() {
		requireError(t, b.pay(t, "", id, b.read(t, model, intruder, 1)), 400, "decryption_failed", "ksn")
	})
	if r := b.pay(t, "", id, b.read(t, model, dev, 1)); r.Status != 201 {
		t.Fatalf("the bound device's read: %d %s", r.Status, r.Body)
	}
	// The device is this terminal's: another terminal of this merchant
	// cannot be activated with it (another merchant's: testOtherMerchantsDevice).
	r := b.h.do(t, apptest.Request{Method: "POST", Path: "/v1/terminals",
		Body: map[string]any{"serial_number": "SN-" + newKey(), "model": string(model)}})
	second := r.Map(t)["id"].(string)
	initial, _ := simulator.InitialKSN(model, dev)
	requireError(t, b.activate(t, "", second, map[string]any{"ksn": initial.String()}), 409, "device_in_use", "ksn")
	if r := b.h.get(t, "/v1/terminals/"+second); r.Map(t)["status"] != "inactive" {
		t.Fatalf("a refused activation changed the terminal: %s", r.Body)
	}
	// A malformed KSN names the field.
	r = b.h.post(t, "/v1/terminals", map[string]any{"serial_number": "SN-" + newKey(), "model": string(model)})
	requireError(t, b.activate(t, "", r.Map(t)["id"].(string), map[string]any{"ksn": "zz"}), 400, "parameter_invalid", "ksn")
}

func (b binder) testReplayElsewhere(t *testing.T, model terminals.Model) {
	dev := "dev-" + newKey()
	victim := b.terminal(t, "", model, dev)
	used := b.read(t, model, dev, 1)
	if r := b.pay(t, "", victim, used); r.Status != 201 {
		t.Fatalf("victim's payment: %d %s", r.Status, r.Body)
	}
	captured := b.read(t, model, dev, 2) // taken on the device, not yet submitted
	// The attacker's terminals are active and bound to no device.
	for _, key := range []string{"", b.otherKey} {
		attacker := b.terminal(t, key, model, "")
		for name, body := range map[string]map[string]any{"used read": used, "captured read": captured} {
			intents := b.h.intentCount(t)
			r := b.pay(t, key, attacker, body)
			if r.Status < 400 || r.Status >= 500 || b.h.intentCount(t) != intents {
				t.Fatalf("%s replayed on terminal %s: %d %s", name, attacker, r.Status, r.Body)
			}
		}
		if w := b.h.written(t, attacker); w.keyID != "" || w.payments != 0 {
			t.Fatalf("the attacker's terminal adopted the device: %+v", w)
		}
	}
	if r := b.pay(t, "", victim, captured); r.Status != 201 {
		t.Fatalf("the victim's own next read: %d %s", r.Status, r.Body)
	}
}

func (b binder) testKSNOnce(t *testing.T, model terminals.Model) {
	dev := "dev-" + newKey()
	first := b.terminal(t, "", model, dev)
	read := b.read(t, model, dev, 1)
	if r := b.pay(t, "", first, read); r.Status != 201 {
		t.Fatalf("payment: %d %s", r.Status, r.Body)
	}
	// The device moves on: its terminal is deregistered, which frees the
	// device for a new terminal of the same merchant. Its old reads stay
	// spent.
	if r := b.h.do(t, apptest.Request{Method: "DELETE", Path: "/v1/terminals/" + first}); r.Status != 200 {
		t.Fatalf("deregister: %d %s", r.Status, r.Body)
	}
	next := b.terminal(t, "", model, "")
	b.h.requireNothingWritten(t, next, func() {
		requireError(t, b.pay(t, "", next, read), 400, "ksn_replayed", "ksn")
	})
	if r := b.pay(t, "", next, b.read(t, model, dev, 2)); r.Status != 201 {
		t.Fatalf("the device's next read on its new terminal: %d %s", r.Status, r.Body)
	}
}

func (b binder) testRace(t *testing.T, model terminals.Model) {
	const rounds = 4
	for i := 0; i < rounds; i++ {
		dev := "dev-" + newKey()
		keys := []string{"", b.otherKey, "", b.otherKey}
		ids := make([]string, len(keys))
		for j, key := range keys {
			ids[j] = b.terminal(t, key, model, "")
		}
		read := b.read(t, model, dev, 1)
		intents := b.h.intentCount(t)
		statuses := make([]int, len(keys))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for j := range keys {
			wg.Add(1)
			go func(j int) {
				defer wg.Done()
				<-start
				statuses[j] = b.pay(t, keys[j], ids[j], read).Status
			}(j)
		}
		close(start)
		wg.Wait()
		won := 0
		for j, s := range statuses {
			switch {
			case s == 201:
				won++
			case s != 400:
				t.Fatalf("round %d terminal %d: status %d, want 201 or 400", i, j, s)
			}
		}
		if won != 1 || b.h.intentCount(t) != intents+1 {
			t.Fatalf("round %d: %d terminals accepted one read (statuses %v), %d intents recorded; want exactly one",
				i, won, statuses, b.h.intentCount(t)-intents)
		}
	}
}

// testOtherMerchantsDevice: a device belongs to the merchant that first bound
// it, even after that merchant's terminal is deregistered. Another merchant's
// test terminal cannot adopt its unused read, nor be activated with it, and
// the refusal of its read is byte for byte (apart from the request id) the
// refusal of a read of a device payd never saw. The owner still works.
func (b binder) testOtherMerchantsDevice(t *testing.T, model terminals.Model) {
	dev := "dev-" + newKey()
	owner := b.terminal(t, "", model, dev)
	// The stranger's terminal bound to its own device refuses the owner's
	// device and a never-seen one with the same answer.
	strangerBound := b.terminal(t, b.otherKey, model, "dev-"+newKey())
	unknown := errorBody(t, b.pay(t, b.otherKey, strangerBound, b.read(t, model, "dev-"+newKey(), 1)))
	if got := errorBody(t, b.pay(t, b.otherKey, strangerBound, b.read(t, model, dev, 1))); got != unknown {
		t.Fatalf("the owner's device answers %s, a never-seen device %s", got, unknown)
	}
	// An unbound test terminal of the stranger cannot adopt the owner's
	// unused read, before or after the owner's terminal is deregistered, and
	// is refused as a never-seen device is on a bound terminal.
	unused := b.read(t, model, dev, 5)
	for _, deregistered := range []bool{false, true} {
		if deregistered {
			if r := b.h.do(t, apptest.Request{Method: "DELETE", Path: "/v1/terminals/" + owner}); r.Status != 200 {
				t.Fatalf("deregister: %d %s", r.Status, r.Body)
			}
		}
		adopter := b.terminal(t, b.otherKey, model, "")
		var got string
		b.h.requireNothingWritten(t, adopter, func() {
			got = errorBody(t, b.pay(t, b.otherKey, adopter, unused))
		})
		if got != unknown {
			t.Fatalf("deregistered %v: the owner's unused read on the stranger's unbound terminal answers %s, want %s", deregistered, got, unknown)
		}
		// Nor can the stranger bind the device: activating a terminal with
		// it answers as activating one with a never-seen device does, and
		// the terminal then refuses the device's reads as any other device's.
		activated := map[string]string{}
		for name, d := range map[string]string{"owner's": dev, "never seen": "dev-" + newKey()} {
			r := b.h.do(t, apptest.Request{Method: "POST", Path: "/v1/terminals", Key: b.otherKey,
				Body: map[string]any{"serial_number": "SN-" + newKey(), "model": string(model)}})
			initial, _ := simulator.InitialKSN(model, d)
			activated[name] = r.Map(t)["id"].(string)
			activated[name+" body"] = terminalBody(t, b.activate(t, b.otherKey, activated[name], map[string]any{"ksn": initial.String()}))
		}
		if activated["owner's body"] != activated["never seen body"] {
			t.Fatalf("deregistered %v: activation with the owner's device answers %s, with a never-seen one %s",
				deregistered, activated["owner's body"], activated["never seen body"])
		}
		b.h.requireNothingWritten(t, activated["owner's"], func() {
			if got := errorBody(t, b.pay(t, b.otherKey, activated["owner's"], unused)); got != unknown {
				t.Fatalf("deregistered %v: the owner's read on the stranger's terminal activated with it: %s", deregistered, got)
			}
		})
	}
	// The owner moves the device to a new terminal and uses the read.
	next := b.terminal(t, "", model, dev)
	if r := b.pay(t, "", next, unused); r.Status != 201 {
		t.Fatalf("the owner's read on the owner's new terminal: %d %s", r.Status, r.Body)
	}
}

// errorBody is a refusal's status and body without its request id.
func errorBody(t *testing.T, r *apptest.Response) string {
	t.Helper()
	if r.Status < 400 {
		t.Fatalf("not refused: %d %s", r.Status, r.Body)
	}
	var m map[string]map[string]any
	r.JSON(t, &m)
	delete(m["error"], "request_id")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %s", r.Status, out)
}

// terminalBody is a terminal answer's status and body without what differs
// between any two terminals (id, serial number, times).
func terminalBody(t *testing.T, r *apptest.Response) string {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	for _, k := range []string{"id", "serial_number", "created_at", "activated_at"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("terminal without %s: %d %s", k, r.Status, r.Body)
		}
		delete(m, k)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %s", r.Status, out)
}
