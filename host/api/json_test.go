package api

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReadJSON: the one body rule every /v1 route reads by.
func TestReadJSON(t *testing.T) {
	type body struct {
		Name string `json:"name"`
	}
	tests := []struct {
		name, in string
		status   int // 0: no error
		want     string
	}{
		{"empty is {}", "", 0, "kept"},
		{"blank is {}", " \n\t", 0, "kept"},
		{"a value", `{"name":"x"}`, 0, "x"},
		{"an unknown field", `{"name":"x","admin":true}`, 400, ""},
		{"two values", `{"name":"x"} {"name":"y"}`, 400, ""},
		{"not JSON", `name=x`, 400, ""},
		{"the wrong type", `{"name":1}`, 400, ""},
		{"over MaxBody", `{"name":"` + strings.Repeat("x", MaxBody) + `"}`, 413, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := body{Name: "kept"}
			err := ReadJSON(httptest.NewRequest("POST", "/v1/x", strings.NewReader(tc.in)), &v)
			var e *Error
			switch {
			case tc.status == 0 && err != nil:
				t.Fatalf("err %v", err)
			case tc.status == 0 && v.Name != tc.want:
				t.Errorf("name %q, want %q", v.Name, tc.want)
			case tc.status != 0 && (!errors.As(err, &e) || e.Status != tc.status):
				t.Errorf("err %v, want status %d", err, tc.status)
			}
		})
	}
}
