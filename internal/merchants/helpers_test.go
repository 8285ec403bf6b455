package merchants_test

import (
	"context"
	"strings"
	"testing"

	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
)

// newMerchant makes the merchants service over db (with a fixed test
// secrets key) and one merchant named name.
func newMerchant(t *testing.T, db *store.DB, name string) (*merchants.Service, merchants.Created) {
	t.Helper()
	box, err := secretbox.New(strings.Repeat("5a", 32))
	if err != nil {
		t.Fatal(err)
	}
	ms := merchants.NewService(db, box)
	m, err := ms.Create(context.Background(), merchants.CreateParams{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return ms, m
}
