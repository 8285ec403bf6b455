package portal

import (
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/merchants"
)

type keysData struct {
	Keys   []merchants.Key
	New    *merchants.NewKey // a key just made: its secret is shown this once
	Rolled string            // the id of the key the new one replaced
}

// keysPage lists the merchant's keys in this mode (never a secret).
func (p *Portal) keysPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderKeys(w, r, c, http.StatusOK, &view{}, nil, "")
}

func (p *Portal) renderKeys(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view, nk *merchants.NewKey, rolled string) error {
	keys, err := p.cfg.Merchants.ListKeys(r.Context(), c.sess.MerchantID, c.live)
	if err != nil {
		return err
	}
	v.Title, v.Section = "API keys", "api_keys"
	v.Data = keysData{Keys: keys, New: nk, Rolled: rolled}
	p.render(w, r, c, status, "api_keys", v)
	return nil
}

// modeKey finds one of the merchant's keys in this mode; any other key
// (another merchant's, the other mode's) is 404.
func (p *Portal) modeKey(r *http.Request, c *reqCtx, id string) (merchants.Key, error) {
	keys, err := p.cfg.Merchants.ListKeys(r.Context(), c.sess.MerchantID, c.live)
	if err != nil {
		return merchants.Key{}, err
	}
	for _, k := range keys {
		if k.ID == id {
			return k, nil
		}
	}
	return merchants.Key{}, errs.NotFound("api_key", id)
}

// createKey makes a key and shows its secret once. merchants.CreateKey
// refuses live keys before approved KYC and a connected live provider; the
// refusal is shown on the page.
func (p *Portal) createKey(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	kind := r.PostFormValue("kind")
	if kind != auth.KindSecret && kind != auth.KindPublishable {
		msg := "Choose secret or publishable."
		return p.renderKeys(w, r, c, http.StatusBadRequest, &view{Error: msg, ErrorCode: "parameter_invalid",
			FieldErrors: map[string]string{"kind": msg}}, nil, "")
	}
	nk, err := p.cfg.Merchants.CreateKeyBy(r.Context(), c.sess.MerchantID, c.live, kind, c.sess.UserID, "")
	p.audit(r.Context(), c, "api_key.create", nk.ID, err, kind)
	if err != nil {
		return p.keyError(w, r, c, err)
	}
	return p.renderKeys(w, r, c, http.StatusCreated, &view{}, &nk, "")
}

// rollKey replaces a key: the new key is made and the old one revoked in one
// transaction, so a failure never leaves the merchant without a key.
func (p *Portal) rollKey(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	old, err := p.modeKey(r, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	if old.RevokedAt != nil {
		return errs.InvalidState("key %s is already revoked", old.ID)
	}
	// The new key continues the old one's identity (four-eyes sees one
	// person) and the old one is revoked in the same transaction.
	nk, err := p.cfg.Merchants.CreateKeyBy(r.Context(), c.sess.MerchantID, c.live, old.Kind, c.sess.UserID, old.ID)
	if err != nil {
		p.audit(r.Context(), c, "api_key.roll", old.ID, err, "")
		return p.keyError(w, r, c, err)
	}
	p.audit(r.Context(), c, "api_key.roll", old.ID, nil, "replaced by "+nk.ID)
	return p.renderKeys(w, r, c, http.StatusCreated, &view{}, &nk, old.ID)
}

func (p *Portal) revokeKey(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	k, err := p.modeKey(r, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	err = p.cfg.Merchants.RevokeKey(r.Context(), c.sess.MerchantID, k.ID)
	p.audit(r.Context(), c, "api_key.revoke", k.ID, err, "")
	if err != nil {
		return err
	}
	return redirect(w, r, c.path("api_keys"), "key_revoked")
}

// keyError shows a refusal (such as live keys before KYC) on the keys page.
func (p *Portal) keyError(w http.ResponseWriter, r *http.Request, c *reqCtx, err error) error {
	e := errs.As(err)
	if e == nil || e.Kind == errs.KindInternal {
		return err
	}
	return p.renderKeys(w, r, c, statusOf(err), &view{Error: e.Message, ErrorCode: e.Code}, nil, "")
}
