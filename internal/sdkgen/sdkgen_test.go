package sdkgen

import (
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct{ in, pascal, camel string }{
		{"payment_intent", "PaymentIntent", "paymentIntent"},
		{"id", "ID", "id"},
		{"uetr", "UETR", "uetr"},
		{"customer_msisdn", "CustomerMSISDN", "customerMSISDN"},
		{"created[gte]", "CreatedGte", "createdGte"},
		{"Last-Event-ID", "LastEventID", "lastEventID"},
		{"createPaymentIntent", "CreatePaymentIntent", "createPaymentIntent"},
		{"return_url", "ReturnURL", "returnURL"},
	} {
		if got := pascal(tc.in); got != tc.pascal {
			t.Errorf("pascal(%q) = %q, want %q", tc.in, got, tc.pascal)
		}
		if got := camel(tc.in); got != tc.camel {
			t.Errorf("camel(%q) = %q, want %q", tc.in, got, tc.camel)
		}
	}
	for in, want := range map[string]string{"Balances": "Balance", "Entries": "Entry", "Batches": "Batch", "Address": "AddressItem", "Data": "DataItem"} {
		if got := singular(in); got != want {
			t.Errorf("singular(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{
		"createPaymentIntent":      "create_payment_intent",
		"getHealth":                "get_health",
		"listUETRs":                "list_uetrs",
		"getHTTPStatus":            "get_http_status",
		"created[gte]":             "created_gte",
		"Last-Event-ID":            "last_event_id",
		"id":                       "id",
		"from":                     "from_",
		"rotateSecretV2":           "rotate_secret_v2",
		"markInvoiceUncollectible": "mark_invoice_uncollectible",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestModel(t *testing.T) {
	m, err := Load("testdata/mini.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Ops) != 2 {
		t.Fatalf("%d operations", len(m.Ops))
	}
	list, create := m.Ops[0], m.Ops[1]
	if list.Name != "listThings" || list.ListItem == nil || list.ListItem.Named != "Thing" || list.Cursor != "id" || !list.Paginated {
		t.Errorf("list: %+v", list)
	}
	if create.Name != "createThing" || !create.NeedsIdem || len(create.Results) != 2 {
		t.Errorf("create: %+v", create)
	}
	files, err := m.GoFiles()
	if err != nil {
		t.Fatal(err)
	}
	types, ops := string(files["types_gen.go"]), string(files["operations_gen.go"])
	for _, want := range []string{
		"type Kind string", `KindBig Kind = "big"`,
		"MadeAt time.Time `json:\"made_at\"`", "GoneAt *time.Time `json:\"gone_at\"`",
		"Meta map[string]string `json:\"meta\"`", // a map although it documents a key
		"Detail *ThingDetail `json:\"detail,omitempty\"`",
		"Note Nullable[string] `json:\"note,omitzero\"`", // optional and nullable in a request
		"Count *int `json:\"count,omitempty\"`",          // optional scalar in a request
		"Queue string `json:\"queue\"`",                  // allOf merged
	} {
		if !strings.Contains(strings.Join(strings.Fields(types), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("types lack %s", want)
		}
	}
	for _, want := range []string{
		"func (c *Client) ListThings(ctx context.Context, query *ListThingsParams, opts ...RequestOption) (*List[Thing], error)",
		"func (c *Client) AllThings(",
		"func (c *Client) CreateThing(ctx context.Context, params *CreateThingRequest, opts ...RequestOption) (*CreateThingResult, error)",
		`v.Set("created[gte]", p.CreatedGte)`,
		`"POST /v1/things": "CreateThing"`,
	} {
		if !strings.Contains(strings.Join(strings.Fields(ops), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("operations lack %s", want)
		}
	}
	pyb, err := m.PyFile()
	if err != nil {
		t.Fatal(err)
	}
	py := string(pyb)
	for _, want := range []string{
		`Kind = Literal["big", "small"]`,
		"class _ThingRequired(TypedDict):", // required keys apart from optional ones
		"class Thing(_ThingRequired, total=False):",
		"gone_at: Optional[str]",
		"meta: Dict[str, str]",
		"detail: ThingDetail",
		"note: Optional[str]",
		"class Job(_JobRequired, total=False):",
		"queue: str",             // allOf merged
		`"created[gte]": "str",`, // not an identifier: the functional form
		"class ThingPage(TypedDict):",
		`"create_thing": Operation(name="createThing", method="POST", path="/v1/things", path_params=(), idempotency_required=True, public=False, also_decode=()),`,
		"def create_thing(self, params: CreateThingRequest, *, idempotency_key: Optional[str] = None, headers: Optional[Mapping[str, str]] = None) -> Union[Thing, Job]:",
		"def list_things(self, query: Optional[ListThingsParams] = None, *, headers: Optional[Mapping[str, str]] = None) -> ThingPage:",
		"def all_things(self, query: Optional[ListThingsParams] = None, *, headers: Optional[Mapping[str, str]] = None) -> Iterator[Thing]:",
		`return self._paginate(OPERATIONS["list_things"], {}, query, "id", headers=headers)`,
	} {
		if !strings.Contains(py, want) {
			t.Errorf("Python lacks %s", want)
		}
	}
	ts := string(m.TSFile())
	for _, want := range []string{
		`export type Kind = "big" | "small";`,
		"gone_at: string | null;",
		"note?: string | null;",
		"createThing(params: CreateThingRequest, options: RequestOptions = {}): Promise<Thing | Job>",
		"allThings(query: ListThingsParams = {}, options: RequestOptions = {}): AsyncGenerator<Thing>",
		`"created[gte]"?: string;`,
	} {
		if !strings.Contains(ts, want) {
			t.Errorf("TypeScript lacks %s", want)
		}
	}
}

func TestPythonRefusesHiddenNames(t *testing.T) {
	for name, m := range map[string]*Model{
		"schema named like an import": {Types: []*Type{{Name: "Operation"}}},
		"two operations, one method": {Ops: []*Op{
			{Name: "getThing", Method: "GET", Path: "/a"},
			{Name: "get_thing", Method: "GET", Path: "/b"},
		}},
		"an operation named like the transport": {Ops: []*Op{{Name: "requestRaw", Method: "GET", Path: "/a"}}},
	} {
		if _, err := m.PyFile(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestPyDocstring(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:             `"""plain"""`,
		`ends with "quote"`: `"""ends with "quote" """`,
		`a \ backslash`:     `"""a \\ backslash"""`,
		`three """ quotes`:  `"""three \"\"\" quotes"""`,
	} {
		if got := pyDocstring(in); got != want {
			t.Errorf("pyDocstring(%q) = %s, want %s", in, got, want)
		}
	}
}
