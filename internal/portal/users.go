package portal

import (
	"net/http"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/merchants"
)

type usersData struct {
	Users []merchants.UserRecord
	Self  string
}

// usersPage lists the merchant's portal users (admins only).
func (p *Portal) usersPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderUsers(w, r, c, http.StatusOK, &view{})
}

func (p *Portal) renderUsers(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	users, err := p.cfg.Merchants.ListUsers(r.Context(), c.sess.MerchantID)
	if err != nil {
		return err
	}
	v.Title, v.Section = "Users", "users"
	v.Data = usersData{Users: users, Self: c.sess.UserID}
	p.render(w, r, c, status, "users", v)
	return nil
}

// createUser adds a user with a role; the admin chooses the first password.
func (p *Portal) createUser(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	email, password, role := r.PostFormValue("email"), r.PostFormValue("password"), r.PostFormValue("role")
	p.hashing <- struct{}{}
	u, err := p.cfg.Merchants.CreateUserBy(r.Context(), c.sess.MerchantID, c.sess.UserID, email, password, role)
	<-p.hashing
	p.audit(r.Context(), c, "user.create", u.ID, err, email+" as "+role)
	if err != nil {
		e := errs.As(err)
		if e == nil || e.Kind == errs.KindInternal {
			return err
		}
		param := e.Param
		if e.Code == "email_taken" {
			param = "email"
		}
		v := &view{Error: e.Message, ErrorCode: e.Code, Form: map[string][]string{"email": {email}, "role": {role}}}
		if param != "" {
			v.FieldErrors = map[string]string{param: e.Message}
		}
		return p.renderUsers(w, r, c, statusOf(err), v)
	}
	return redirect(w, r, c.path("users"), "user_created")
}

// disableUser stops a user signing in; an admin cannot disable themselves
// (so a merchant is never left without an admin by accident).
func (p *Portal) disableUser(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	if id == c.sess.UserID {
		return errs.Conflict("cannot_disable_self", "you cannot disable your own user")
	}
	err := p.cfg.Merchants.DisableUser(r.Context(), c.sess.MerchantID, id)
	p.audit(r.Context(), c, "user.disable", id, err, "")
	if err != nil {
		return err
	}
	return redirect(w, r, c.path("users"), "user_disabled")
}
