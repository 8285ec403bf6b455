package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/payd/payd/internal/merchants"
)

func init() {
	describe("user create", usage{
		synopsis: "--merchant ID --email E --role admin|approver|viewer [--json]",
		about: "Adds a portal user to a merchant with a random one-time invitation password, printed once: at the\n" +
			"first portal sign-in the user must choose their own before anything else works. The merchant's audit\n" +
			"log records the creation (action user.create, by \"operator\", in test mode).",
		vars: databaseVars,
	})
	describe("user list", usage{
		synopsis: "--merchant ID [--json]",
		about: "Lists a merchant's portal users, oldest first: id, email, role, status (active, invited: still on an\n" +
			"invitation password, or disabled) and creation time. Passwords are never shown.",
		vars: databaseVars,
	})
}

// userCreated is what `payd user create --json` prints.
type userCreated struct {
	ID         string `json:"id"`
	MerchantID string `json:"merchant_id"`
	Email      string `json:"email"`
	Role       string `json:"role"`
	Password   string `json:"password"`
}

// userRow is one user as `payd user list --json` prints it.
type userRow struct {
	ID         string     `json:"id"`
	Email      string     `json:"email"`
	Role       string     `json:"role"`
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	DisabledAt *time.Time `json:"disabled_at"`
}

func runUserCreate(ctx context.Context, e *env, args []string) error {
	fs := newFlags("user create")
	id := fs.String("merchant", "", "merchant id (required)")
	email := fs.String("email", "", "the user's email (required)")
	role := fs.String("role", "", "admin, approver or viewer (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(e, fs, args[1:]); err != nil {
		return err
	}
	if *id == "" || *email == "" || *role == "" {
		return badUsage(e, fs, "--merchant, --email and --role are required")
	}
	m, err := open(ctx, e, "")
	if err != nil {
		return err
	}
	defer m.Close()
	u, password, err := m.Merchants.CreateUserByOperator(ctx, *id, *email, *role)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(userCreated{ID: u.ID, MerchantID: u.MerchantID, Email: u.Email, Role: u.Role, Password: password})
	}
	fmt.Fprintf(e.stdout, "user             %s\nportal login     %s / %s (one-time: the user chooses a password at first sign-in)\nrole             %s\n",
		u.ID, u.Email, password, u.Role)
	return nil
}

func runUserList(ctx context.Context, e *env, args []string) error {
	fs := newFlags("user list")
	id := fs.String("merchant", "", "merchant id (required)")
	asJSON := fs.Bool("json", false, "print JSON (an array of users)")
	if err := parseFlags(e, fs, args[1:]); err != nil {
		return err
	}
	if *id == "" {
		return badUsage(e, fs, "--merchant is required")
	}
	m, err := open(ctx, e, "")
	if err != nil {
		return err
	}
	defer m.Close()
	if _, err := m.Merchants.Get(ctx, *id); err != nil {
		return err
	}
	users, err := m.Merchants.ListUsers(ctx, *id)
	if err != nil {
		return err
	}
	rows := make([]userRow, 0, len(users))
	for _, u := range users {
		rows = append(rows, userRow{ID: u.ID, Email: u.Email, Role: u.Role, Status: userStatus(u),
			CreatedAt: u.CreatedAt.UTC().Truncate(time.Second), DisabledAt: u.DisabledAt})
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEMAIL\tROLE\tSTATUS\tCREATED")
	for _, u := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.ID, u.Email, u.Role, u.Status, u.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

// userStatus is disabled, invited (still on an invitation password) or active.
func userStatus(u merchants.UserRecord) string {
	switch {
	case u.DisabledAt != nil:
		return "disabled"
	case u.MustSetPassword:
		return "invited"
	}
	return "active"
}
