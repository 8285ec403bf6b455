package billing

import (
	"time"

	"context"
	"net/mail"
	"net/url"
	"unicode/utf8"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
)

// CustomerParams is the body of POST /v1/customers and of its update; on
// update only the fields sent change (test_clock cannot).
type CustomerParams struct {
	Name           *string           `json:"name"`
	Email          *string           `json:"email"`
	Phone          *string           `json:"phone"`
	Metadata       map[string]string `json:"metadata"`
	DefaultPayment *DefaultPayment   `json:"default_payment"`
	TestClock      *string           `json:"test_clock"`
}

const (
	maxName  = 256
	maxEmail = 512
)

// checkCustomer validates the fields present.
func checkCustomer(in CustomerParams) error {
	if in.Name != nil && (*in.Name == "" || !utf8.ValidString(*in.Name) || utf8.RuneCountInString(*in.Name) > maxName) {
		return errs.Invalid("name", "parameter_invalid", "name must be 1 to %d characters", maxName)
	}
	if in.Email != nil {
		a, err := mail.ParseAddress(*in.Email)
		if err != nil || a.Address != *in.Email || len(*in.Email) > maxEmail {
			return errs.Invalid("email", "parameter_invalid", "email must be a plain e-mail address such as ana@example.com")
		}
	}
	if in.Phone != nil {
		if _, err := payments.ProviderMSISDN("wallet_c", *in.Phone); err != nil {
			return errs.Invalid("phone", "parameter_invalid", "phone must be an E.164 number: + and 8 to 15 digits, the first not 0")
		}
	}
	if err := payments.ValidateMetadata(in.Metadata); err != nil {
		return err
	}
	if dp := in.DefaultPayment; dp != nil {
		return checkDefaultPayment(dp)
	}
	return nil
}

// checkDefaultPayment checks a default payment as a payment intent would
// check the same provider, number and metadata.
func checkDefaultPayment(dp *DefaultPayment) error {
	if dp.Provider == "" {
		return errs.Missing("default_payment.provider")
	}
	if _, err := payments.ChooseFlow(dp.Provider, dp.Metadata); err != nil {
		return prefixParam("default_payment.", err)
	}
	if err := payments.ValidateMetadata(dp.Metadata); err != nil {
		return prefixParam("default_payment.", err)
	}
	if dp.CustomerMSISDN != nil {
		if _, err := payments.ProviderMSISDN(dp.Provider, *dp.CustomerMSISDN); err != nil {
			return errs.Invalid("default_payment.customer_msisdn", "parameter_invalid", "%s", err.Error())
		}
	} else if needsMSISDN(dp) {
		return errs.Missing("default_payment.customer_msisdn")
	}
	return nil
}

// needsMSISDN: the rails whose payment intents require the customer's
// number (bank_a, bank_b, wallet_c and wallet_a's push flow).
func needsMSISDN(dp *DefaultPayment) bool {
	switch dp.Provider {
	case "bank_a", "bank_b", "wallet_c":
		return true
	case "wallet_a":
		_, mode := dp.Metadata["wallet_a_mode"]
		return !mode
	}
	return false
}

func prefixParam(prefix string, err error) error {
	if e := errs.As(err); e != nil && e.Param != "" {
		c := *e
		c.Param = prefix + e.Param
		return &c
	}
	return err
}

// CreateCustomer records a customer (customer.created in the same
// transaction). A customer created with test_clock lives on that clock.
func (s *Service) CreateCustomer(ctx context.Context, cl store.Claim, p auth.Principal, in CustomerParams) (Customer, error) {
	if in.Name == nil {
		return Customer{}, errs.Missing("name")
	}
	if err := checkCustomer(in); err != nil {
		return Customer{}, err
	}
	c := Customer{ID: ids.New("cus_"), Object: "customer", Name: *in.Name, Email: in.Email, Phone: in.Phone, Metadata: in.Metadata,
		DefaultPayment: in.DefaultPayment, TestClock: in.TestClock, Livemode: p.Livemode, MerchantID: p.MerchantID}
	if c.Metadata == nil {
		c.Metadata = map[string]string{}
	}
	if dp := c.DefaultPayment; dp != nil && dp.Metadata == nil {
		dp.Metadata = map[string]string{}
	}
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		c.CreatedAt = tx.Now().Truncate(1e9)
		var clockCreated *time.Time
		if in.TestClock != nil {
			clk, err := loadClock(ctx, tx, p.MerchantID, p.Livemode, *in.TestClock)
			if err != nil {
				return errs.Invalid("test_clock", "resource_missing", "no such test clock: '%s'", *in.TestClock)
			}
			at := clk.clockTime()
			clockCreated = &at
			c.CreatedAt = createdOnClock(c.CreatedAt, clockCreated)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO customers (id, merchant_id, livemode, name, email, phone, metadata, default_payment, test_clock_id, created_at, updated_at, clock_created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, c.ID, c.MerchantID, c.Livemode, c.Name, c.Email, c.Phone, jsonText(c.Metadata),
			dpText(c.DefaultPayment), c.TestClock, store.Micros(tx.Now()), store.Micros(tx.Now()), store.MicrosPtr(clockCreated)); err != nil {
			return err
		}
		return emit(ctx, tx, c.MerchantID, c.Livemode, EventCustomerCreated, "customer", c.ID, c)
	})
	return c, err
}

// GetCustomer returns one customer of the principal's merchant and mode.
func (s *Service) GetCustomer(ctx context.Context, p auth.Principal, id string) (Customer, error) {
	c, err := loadCustomer(ctx, s.db, p.MerchantID, p.Livemode, id)
	if err != nil {
		return Customer{}, err
	}
	return *c, nil
}

// UpdateCustomer changes the fields sent (customer.updated in the same
// transaction).
func (s *Service) UpdateCustomer(ctx context.Context, cl store.Claim, p auth.Principal, id string, in CustomerParams) (Customer, error) {
	if in.TestClock != nil {
		return Customer{}, errs.Invalid("test_clock", "parameter_invalid", "a customer's test_clock is set at creation and cannot change")
	}
	if err := checkCustomer(in); err != nil {
		return Customer{}, err
	}
	var out Customer
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		c, err := loadCustomer(ctx, tx, p.MerchantID, p.Livemode, id)
		if err != nil {
			return err
		}
		if in.Name != nil {
			c.Name = *in.Name
		}
		if in.Email != nil {
			c.Email = in.Email
		}
		if in.Phone != nil {
			c.Phone = in.Phone
		}
		if in.Metadata != nil {
			c.Metadata = in.Metadata
		}
		if in.DefaultPayment != nil {
			c.DefaultPayment = in.DefaultPayment
			if c.DefaultPayment.Metadata == nil {
				c.DefaultPayment.Metadata = map[string]string{}
			}
		}
		res, err := tx.Exec(ctx, `UPDATE customers SET name = ?, email = ?, phone = ?, metadata = ?, default_payment = ?, updated_at = ?
			WHERE id = ? AND deleted_at IS NULL`, c.Name, c.Email, c.Phone, jsonText(c.Metadata), dpText(c.DefaultPayment), store.Micros(tx.Now()), c.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errs.NotFound("customer", id)
		}
		out = *c
		return emit(ctx, tx, c.MerchantID, c.Livemode, EventCustomerUpdated, "customer", c.ID, c)
	})
	return out, err
}

// DeleteCustomer deletes a customer and cancels its subscriptions now
// (customer.subscription.deleted for each, then customer.deleted), in one
// transaction. A deleted customer is 404 afterwards; its invoices remain.
func (s *Service) DeleteCustomer(ctx context.Context, cl store.Claim, p auth.Principal, id string) (Deleted, error) {
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		c, err := loadCustomer(ctx, tx, p.MerchantID, p.Livemode, id)
		if err != nil {
			return err
		}
		now, err := nowFor(ctx, tx, c.MerchantID, c.Livemode, c.TestClock, tx.Now())
		if err != nil {
			return err
		}
		res, err := tx.Exec(ctx, "UPDATE customers SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL",
			store.Micros(tx.Now()), store.Micros(tx.Now()), c.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errs.NotFound("customer", id)
		}
		subs, err := s.customerSubs(ctx, tx, c.ID)
		if err != nil {
			return err
		}
		for _, sub := range subs {
			if sub.Status == Canceled {
				continue
			}
			if err := s.cancelNow(ctx, tx, sub, now); err != nil {
				return err
			}
		}
		return emit(ctx, tx, c.MerchantID, c.Livemode, EventCustomerDeleted, "customer", c.ID, Deleted{ID: c.ID, Object: "customer", Deleted: true})
	})
	if err != nil {
		return Deleted{}, err
	}
	return Deleted{ID: id, Object: "customer", Deleted: true}, nil
}

func (s *Service) customerSubs(ctx context.Context, q store.Querier, customerID string) ([]*Subscription, error) {
	return scanSubs(q.Query(ctx, "SELECT "+subColumns+" FROM subscriptions WHERE customer_id = ? ORDER BY id", customerID))
}

// CustomerListParams filters GET /v1/customers.
type CustomerListParams struct {
	Page  pagination.Page
	Email string
	Phone string
}

// ParseCustomerList reads limit, the cursors, email and phone.
func ParseCustomerList(q url.Values) (CustomerListParams, error) {
	lp := CustomerListParams{Email: q.Get("email"), Phone: q.Get("phone")}
	var err error
	lp.Page, err = pagination.Parse(q)
	return lp, err
}

// ListCustomers returns the principal's customers, newest first.
func (s *Service) ListCustomers(ctx context.Context, p auth.Principal, lp CustomerListParams) (pagination.List[Customer], error) {
	q := "SELECT " + customerColumns + " FROM customers WHERE merchant_id = ? AND livemode = ? AND deleted_at IS NULL"
	args := []any{p.MerchantID, p.Livemode}
	if lp.Email != "" {
		q += " AND email = ?"
		args = append(args, lp.Email)
	}
	if lp.Phone != "" {
		q += " AND phone = ?"
		args = append(args, lp.Phone)
	}
	return list(ctx, s.db, q, args, lp.Page, scanCustomer)
}

// list runs a list query with the page's cursor, order and limit.
func list[T any](ctx context.Context, db *store.DB, q string, args []any, page pagination.Page, scan func(row) (*T, error)) (pagination.List[T], error) {
	cond, cargs, tail := page.ClauseScoped("id", "merchant_id", "livemode")
	rows, err := db.Query(ctx, q+cond+tail, append(args, cargs...)...)
	if err != nil {
		return pagination.List[T]{}, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return pagination.List[T]{}, err
		}
		out = append(out, *v)
	}
	if err := rows.Err(); err != nil {
		return pagination.List[T]{}, err
	}
	items, more := pagination.Finish(page, out)
	return pagination.NewList(items, more), nil
}
