package iso20022

import (
	"encoding/json"
	"strconv"
)

// DecodeJSON reads the JSON envelope of a credit transfer: msg_id, created_at, settlement.method and transactions[] with uetr,
// end_to_end_id, amount_minor (an integer in minor units), currency,
// charge_bearer, debtor{name,account}, debtor_agent, creditor{name,account},
// creditor_agent and remittance_info.
//
// A body that is not one JSON object, or breaks the size and depth limits, is
// a *ParseError (HTTP 400). A well-formed object of the wrong shape (an
// unknown or duplicate member, a value of the wrong JSON type, no
// transactions) is a *SchemaError, returned with what could be read: the
// group is rejected with FF01, as schema-invalid XML is. Missing or malformed
// values are left to Validate, which gives the finer reason codes.
func DecodeJSON(body []byte) (Message, error) {
	problem, err := checkJSONShape(body, transferShape)
	if err != nil {
		return Message{}, err
	}
	var env jsonEnvelope
	// The shape check has vetted names and kinds; Unmarshal fills what it can
	// even when the shape was wrong, for the rejection report.
	_ = json.Unmarshal(body, &env)
	m := env.message()
	if problem == nil && len(env.Transactions) == 0 {
		problem = &FieldError{Path: "transactions", Code: ReasonFF01, Reason: "at least one transaction is required"}
	}
	if problem != nil {
		return m, &SchemaError{Problems: []FieldError{*problem}}
	}
	return m, nil
}

type jsonEnvelope struct {
	MsgID      string `json:"msg_id"`
	CreatedAt  string `json:"created_at"`
	Settlement struct {
		Method string `json:"method"`
	} `json:"settlement"`
	Transactions []jsonTransaction `json:"transactions"`
}

type jsonTransaction struct {
	UETR           string          `json:"uetr"`
	EndToEndID     string          `json:"end_to_end_id"`
	AmountMinor    json.RawMessage `json:"amount_minor"`
	Currency       string          `json:"currency"`
	ChargeBearer   string          `json:"charge_bearer"`
	Debtor         jsonParty       `json:"debtor"`
	DebtorAgent    string          `json:"debtor_agent"`
	Creditor       jsonParty       `json:"creditor"`
	CreditorAgent  string          `json:"creditor_agent"`
	RemittanceInfo string          `json:"remittance_info"`
}

type jsonParty struct {
	Name    string `json:"name"`
	Account string `json:"account"`
}

// party returns the debtor or creditor; JSON has one account field, so an
// account of IBAN shape is taken to be an IBAN.
func (p jsonParty) party() Party {
	return Party{Name: p.Name, Account: p.Account, IBAN: LooksLikeIBAN(p.Account)}
}

func (env *jsonEnvelope) message() Message {
	m := Message{
		MsgID:            env.MsgID,
		CreatedAtText:    env.CreatedAt,
		CreatedAt:        parseCreatedAt(env.CreatedAt),
		SettlementMethod: env.Settlement.Method,
		DeclaredTxCount:  strconv.Itoa(len(env.Transactions)),
		Transactions:     make([]Transaction, 0, len(env.Transactions)),
	}
	for _, x := range env.Transactions {
		amt := amountReading{issue: "amount_minor is missing"}
		if len(x.AmountMinor) > 0 && string(x.AmountMinor) != "null" {
			amt = readMinorAmount(string(x.AmountMinor))
		}
		m.Transactions = append(m.Transactions, Transaction{
			UETR:           x.UETR,
			EndToEndID:     x.EndToEndID,
			AmountMinor:    amt.minor,
			Currency:       x.Currency,
			AmountFraction: amt.fraction,
			AmountIssue:    amt.issue,
			ChargeBearer:   x.ChargeBearer,
			Debtor:         x.Debtor.party(),
			DebtorAgent:    x.DebtorAgent,
			Creditor:       x.Creditor.party(),
			CreditorAgent:  x.CreditorAgent,
			RemittanceInfo: x.RemittanceInfo,
		})
	}
	return m
}
