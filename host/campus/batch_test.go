package campus

import (
	"context"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host/campus/campustest"
)

// askITS is a Prompter that answers ITS's question with the separate account
// and never gives an authenticator code.
type askITS struct{ asked []string }

func (a *askITS) ITSAccount(ctx context.Context, refusal string) (string, string, error) {
	a.asked = append(a.asked, "its: "+refusal)
	return campustest.ITSUser2, campustest.ITSPassword2, nil
}

func (a *askITS) OTP(ctx context.Context, message string) (string, error) {
	a.asked = append(a.asked, "otp")
	return "", nil
}

// TestSignInAll: the batch every face runs — a wrong password stops at
// IAAA's first refusal (one attempt, not one per service: IAAA locks the
// account after a few), the account is saved only when something signed in,
// and ITS's own account is asked for, given up front, or taken from storage.
func TestSignInAll(t *testing.T) {
	ctx := context.Background()
	every := []string{"card", "treehole", "its", "blackboard"}
	tests := []struct {
		name     string
		b        Batch
		setup    func(s *campustest.Stand)
		prompter bool
		want     string // "service:ok|service:fail", in order
		attempts int    // IAAA password sign-ins
		saved    bool   // the IAAA account is kept
		asked    string
	}{
		{name: "all well", b: Batch{Services: every, User: campustest.User, Password: campustest.Password},
			want: "card:ok|treehole:ok|its:ok|blackboard:ok", attempts: 3, saved: true},
		{name: "a wrong password stops at the first refusal", b: Batch{Services: every, User: campustest.User, Password: "wrong"},
			want: "card:fail", attempts: 1},
		{name: "ITS first, then a wrong password: still one IAAA attempt", b: Batch{Services: []string{"its", "card", "treehole"}, User: campustest.User, Password: "wrong"},
			want: "its:fail|card:fail", attempts: 1},
		{name: "ITS's own account, asked", b: Batch{Services: []string{"its"}, User: campustest.User, Password: campustest.Password},
			setup: func(s *campustest.Stand) { s.ITSUser, s.ITSPassword = campustest.ITSUser2, campustest.ITSPassword2 }, prompter: true,
			want: "its:ok", saved: true, asked: "its: "},
		{name: "ITS's own account, given", b: Batch{Services: []string{"its"}, User: campustest.User, Password: campustest.Password,
			ITSUser: campustest.ITSUser2, ITSPassword: campustest.ITSPassword2},
			setup: func(s *campustest.Stand) { s.ITSUser, s.ITSPassword = campustest.ITSUser2, campustest.ITSPassword2 },
			want:  "its:ok", saved: true},
		{name: "ITS refuses with no one to ask", b: Batch{Services: []string{"its"}, User: campustest.User, Password: campustest.Password},
			setup: func(s *campustest.Stand) { s.ITSUser, s.ITSPassword = campustest.ITSUser2, campustest.ITSPassword2 },
			want:  "its:fail"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			if tc.setup != nil {
				r.stand.Set(tc.setup)
			}
			p := &askITS{}
			if tc.prompter {
				tc.b.Prompter = p
			}
			results, err := r.signer.SignInAll(ctx, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, res := range results {
				got = append(got, res.Service+":"+map[bool]string{true: "ok", false: "fail"}[res.OK])
			}
			if strings.Join(got, "|") != tc.want {
				t.Errorf("results %v, want %s", got, tc.want)
			}
			if n := r.stand.Count("iaaa POST /iaaa/oauthlogin.do"); n != tc.attempts {
				t.Errorf("%d IAAA password sign-ins, want %d", n, tc.attempts)
			}
			if _, _, ok, _ := r.acc.User(ctx, AccountIAAA); ok != tc.saved {
				t.Errorf("IAAA account kept: %v, want %v", ok, tc.saved)
			}
			if a := strings.Join(p.asked, ","); !strings.HasPrefix(a, tc.asked) || (tc.asked == "" && a != "") {
				t.Errorf("asked %q, want %q…", a, tc.asked)
			}
		})
	}
	// An unknown service is refused before anything is tried.
	r := newRig(t)
	if _, err := r.signer.SignInAll(ctx, Batch{Services: []string{"card", "nope"}, User: campustest.User, Password: campustest.Password}); err == nil ||
		!strings.Contains(err.Error(), `unknown campus service "nope"`) {
		t.Errorf("unknown service: %v", err)
	}
	if n := r.stand.Count("iaaa "); n != 0 {
		t.Errorf("%d IAAA requests for a refused batch", n)
	}
}
