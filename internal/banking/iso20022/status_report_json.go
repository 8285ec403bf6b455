package iso20022

import "encoding/json"

// EncodeStatusReportJSON writes report as the JSON mirror of pacs.002 that
// payd answers a JSON credit transfer with: msg_id, created_at,
// original_msg_id, group_status (PART when the transactions differ) and
// transactions[] with uetr, end_to_end_id, status and, when there is one,
// status_reason{code, text}.
// status_reason also carries "detail" when payd has one, and appears at the
// top level for a whole-group rejection. References are echoed as received.
// It carries the same facts as the XML report, under the same conditions:
// original_created_at (OrgnlCreDtTm, as received), and per transaction
// accepted_at (AccptncDtTm, not for a rejection), settlement_date
// (FctvIntrBkSttlmDt, once settled), instructing_agent and instructed_agent
// (InstgAgt, InstdAgt: BICs); each is left out when the XML leaves it out.
func EncodeStatusReportJSON(report StatusReport) ([]byte, error) {
	if err := report.check(); err != nil {
		return nil, err
	}
	out := jsonReport{
		MsgID:             report.MsgID,
		CreatedAt:         formatTimestamp(report.CreatedAt),
		OriginalMsgID:     report.OriginalMsgID,
		OriginalCreatedAt: report.originalCreatedText(),
		GroupStatus:       report.GroupStatus(),
		StatusReason:      jsonReasonOf(report.GroupReason),
		Transactions:      make([]jsonTxStatus, 0, len(report.Transactions)),
	}
	for _, tx := range report.Transactions {
		out.Transactions = append(out.Transactions, jsonTxStatus{
			UETR:             tx.UETR,
			EndToEndID:       tx.EndToEndID,
			Status:           tx.Status,
			StatusReason:     jsonReasonOf(tx.Reason),
			AcceptedAt:       tx.acceptedText(),
			SettlementDate:   tx.settledDateText(),
			InstructingAgent: agentBIC(tx.InstructingAgent),
			InstructedAgent:  agentBIC(tx.InstructedAgent),
		})
	}
	return json.MarshalIndent(out, "", "  ")
}

type jsonReport struct {
	MsgID             string         `json:"msg_id"`
	CreatedAt         string         `json:"created_at"`
	OriginalMsgID     string         `json:"original_msg_id"`
	OriginalCreatedAt string         `json:"original_created_at,omitempty"`
	GroupStatus       string         `json:"group_status"`
	StatusReason      *jsonStatusWhy `json:"status_reason,omitempty"`
	Transactions      []jsonTxStatus `json:"transactions"`
}

type jsonTxStatus struct {
	UETR             string         `json:"uetr"`
	EndToEndID       string         `json:"end_to_end_id"`
	Status           string         `json:"status"`
	StatusReason     *jsonStatusWhy `json:"status_reason,omitempty"`
	AcceptedAt       string         `json:"accepted_at,omitempty"`
	SettlementDate   string         `json:"settlement_date,omitempty"`
	InstructingAgent string         `json:"instructing_agent,omitempty"`
	InstructedAgent  string         `json:"instructed_agent,omitempty"`
}

type jsonStatusWhy struct {
	Code   string `json:"code"`
	Text   string `json:"text"`
	Detail string `json:"detail,omitempty"`
}

func jsonReasonOf(r StatusReason) *jsonStatusWhy {
	if r.IsZero() {
		return nil
	}
	return &jsonStatusWhy{Code: r.Code, Text: r.Text, Detail: r.Detail}
}
