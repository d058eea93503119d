package cli

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

type refuse struct{ hosts []string }

func (r *refuse) RoundTrip(req *http.Request) (*http.Response, error) {
	r.hosts = append(r.hosts, req.URL.Host)
	return nil, errors.New("public transport")
}

// TestStandInTransport sends a plugin's portal request to the stand-in with its path and
// percent-encoded query kept, leaves every other host (a look-alike included) to the public
// transport, and ignores names without a public host of their own.
func TestStandInTransport(t *testing.T) {
	var got string
	stand := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Host + " " + r.URL.RequestURI()
		io.WriteString(w, "ok")
	}))
	defer stand.Close()
	rt, err := newStandInTransport(map[string]string{"portal": stand.URL + "/base"})
	if err != nil || rt == nil {
		t.Fatal(rt, err)
	}
	pub := &refuse{}
	rt.(*standInTransport).other = pub
	req, _ := http.NewRequest("GET", "https://portal.pku.edu.cn/publicQuery/classroomQuery/retrClassRoomFree.do?buildingName=%E7%90%86%E6%95%99&time=%E4%BB%8A%E5%A4%A9", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := stand.Listener.Addr().String() + " /base/publicQuery/classroomQuery/retrClassRoomFree.do?buildingName=%E7%90%86%E6%95%99&time=%E4%BB%8A%E5%A4%A9"; got != want {
		t.Errorf("the stand-in got %q; want %q", got, want)
	}
	for _, u := range []string{"https://portal.pku.edu.cn.evil.example/x", "https://evil.example/portal.pku.edu.cn", "https://www.pku.edu.cn/"} {
		req, _ := http.NewRequest("GET", u, nil)
		if _, err := rt.RoundTrip(req); err == nil || err.Error() != "public transport" {
			t.Errorf("%s: %v; want the public transport", u, err)
		}
	}
	if len(pub.hosts) != 3 {
		t.Errorf("public transport saw %v", pub.hosts)
	}
	if rt, err := newStandInTransport(map[string]string{}); rt != nil || err != nil {
		t.Errorf("no names: %v %v", rt, err)
	}
}
