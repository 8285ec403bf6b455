package card

import "testing"

func TestBrandOf(t *testing.T) {
	tests := []struct {
		pan  string
		want Brand
	}{
		{"4242424242424242", BrandVisa},
		{"4000000000000002", BrandVisa},
		{"5555555555554444", BrandMastercard},
		{"5105105105105100", BrandMastercard},
		{"2221000000000009", BrandMastercard},
		{"2720990000000007", BrandMastercard},
		{"2220990000000000", BrandUnknown}, // just below the 2-series
		{"2721000000000000", BrandUnknown}, // just above the 2-series
		{"378282246310005", BrandAmex},
		{"371449635398431", BrandAmex},
		{"6011111111111117", BrandDiscover},
		{"6445644564456445", BrandDiscover},
		{"6500000000000002", BrandDiscover},
		{"6200000000000005", BrandUnionPay},
		{"8171999927660000", BrandUnionPay},
		{"3566002020360505", BrandJCB},
		{"3528000000000007", BrandJCB},
		{"3589000000000003", BrandJCB},
		{"3530111333300000", BrandJCB},
		{"36227206271667", BrandUnknown},   // Diners Club
		{"6759649826438453", BrandUnknown}, // Maestro
		{"", BrandUnknown},
		{"4x42", BrandUnknown},
		{"3", BrandUnknown},
	}
	for _, tt := range tests {
		if got := BrandOf(tt.pan); got != tt.want {
			t.Errorf("BrandOf(%q) = %s, want %s", tt.pan, got, tt.want)
		}
	}
}

func TestLuhnValid(t *testing.T) {
	tests := []struct {
		pan  string
		want bool
	}{
		{"4242424242424242", true},
		{"4000000000000002", true},
		{"378282246310005", true},
		{"6011111111111117", true},
		{"4242424242424241", false},
		{"79927398713", true},
		{"79927398710", false},
		{"0", true},
		{"", false},
		{"4242 4242 4242 4242", false},
	}
	for _, tt := range tests {
		if got := LuhnValid(tt.pan); got != tt.want {
			t.Errorf("LuhnValid(%q) = %v, want %v", tt.pan, got, tt.want)
		}
	}
}
