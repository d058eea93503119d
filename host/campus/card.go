package campus

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/pkuinfo/harness/interp"
)

// CardPayer is the account a payment code is drawn on (docs/CAMPUS-PROTOCOLS.md §8.2): Account is the
// card account queryCard reports; PayAcc and PayType name the purse codebarPayinfo lists
// (Name, e.g. "电子账户"); Holder is the card holder's name.
type CardPayer struct {
	Account, PayAcc, PayType, Name, Holder string
}

// maxCardReply bounds a card reply read into memory.
const maxCardReply = 1 << 20

// cardGet sends GET path?query to the card service through cc (which signs it: the
// synjones-auth token, synaccesssource: h5 and the Android app's User-Agent, §8.1) and decodes
// the envelope's data into out. synAccessSource=h5 is always in the query (§1.2). Errors name
// the path: a transport error (a *NotSignedInError when the host holds no card session), an
// HTTP status other than 200, a reply that is not the envelope, or an envelope that is not
// code 200 with success true (its msg or message is quoted).
func cardGet(ctx context.Context, cc interp.CampusClient, path string, q url.Values, out any) error {
	if q == nil {
		q = url.Values{}
	}
	q.Set("synAccessSource", "h5")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path+"?"+q.Encode(), nil)
	if err != nil {
		return fmt.Errorf("card %s: %w", path, err)
	}
	req.Header.Set("User-Agent", uaCardApp)
	req.Header.Set("X-Requested-With", "cn.edu.pku.PKUAndroid")
	resp, err := cc.Do(ctx, "card", req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxCardReply+1))
	if err != nil {
		return fmt.Errorf("card %s: read the reply: %w", path, err)
	}
	if len(b) > maxCardReply {
		return fmt.Errorf("card %s: the reply is over %d bytes", path, maxCardReply)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("card %s: HTTP %d", path, resp.StatusCode)
	}
	var env struct {
		Code    json.Number     `json:"code"`
		Success bool            `json:"success"`
		Data    json.RawMessage `json:"data"`
		Msg     string          `json:"msg"`
		Message string          `json:"message"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("card %s: the reply is not the card's JSON envelope: %w", path, err)
	}
	if env.Code.String() != "200" || !env.Success {
		text := env.Msg
		if text == "" {
			text = env.Message
		}
		return fmt.Errorf("card %s: the card service answered code %s: %q", path, env.Code, text)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("card %s: data is not the expected shape: %w", path, err)
	}
	return nil
}

// CardPayerOf finds the account to draw payment codes on: the first card of queryCard (its
// account and holder's name) and the first purse of codebarPayinfo (payacc, paytype, name),
// docs/CAMPUS-PROTOCOLS.md §8.2. It fails when the person has no card or no purse that pays by code,
// or when the card is reported lost or frozen.
func CardPayerOf(ctx context.Context, cc interp.CampusClient) (CardPayer, error) {
	var cards struct {
		Card []struct {
			Account    cardText `json:"account"`
			Name       string   `json:"name"`
			LostFlag   int      `json:"lostflag"`
			FreezeFlag int      `json:"freezeflag"`
		} `json:"card"`
	}
	if err := cardGet(ctx, cc, "/berserker-app/ykt/tsm/queryCard", nil, &cards); err != nil {
		return CardPayer{}, err
	}
	if len(cards.Card) == 0 || string(cards.Card[0].Account) == "" {
		return CardPayer{}, fmt.Errorf("card queryCard: the person has no campus card")
	}
	c := cards.Card[0]
	if c.LostFlag != 0 || c.FreezeFlag != 0 {
		return CardPayer{}, fmt.Errorf("card queryCard: the card is reported lost or frozen (lostflag %d, freezeflag %d)", c.LostFlag, c.FreezeFlag)
	}
	var purses []struct {
		Name    string   `json:"name"`
		PayAcc  cardText `json:"payacc"`
		PayType cardText `json:"paytype"`
	}
	if err := cardGet(ctx, cc, "/berserker-app/ykt/tsm/codebarPayinfo", nil, &purses); err != nil {
		return CardPayer{}, err
	}
	if len(purses) == 0 || string(purses[0].PayAcc) == "" || string(purses[0].PayType) == "" {
		return CardPayer{}, fmt.Errorf("card codebarPayinfo: no purse pays by code")
	}
	return CardPayer{Account: string(c.Account), PayAcc: string(purses[0].PayAcc), PayType: string(purses[0].PayType),
		Name: purses[0].Name, Holder: c.Name}, nil
}

// CardPaymentCode fetches a fresh payment code for p: GET
// /berserker-app/ykt/tsm/batchGetBarCodeGet with account, payacc and paytype, whose data is
// { barcode: [string] } (docs/CAMPUS-PROTOCOLS.md §8.2); the first payload is returned. A payload is
// what the campus POS scans (shown as a QR code or a barcode); it is a bearer credential for
// the person's money and must be shown only to whom the person chose. An empty list or an
// empty or over-long (> 512 bytes) payload is an error.
func CardPaymentCode(ctx context.Context, cc interp.CampusClient, p CardPayer) (string, error) {
	q := url.Values{"account": {p.Account}, "payacc": {p.PayAcc}, "paytype": {p.PayType}}
	var data struct {
		Barcode []string `json:"barcode"`
	}
	if err := cardGet(ctx, cc, "/berserker-app/ykt/tsm/batchGetBarCodeGet", q, &data); err != nil {
		return "", err
	}
	if len(data.Barcode) == 0 {
		return "", fmt.Errorf("card batchGetBarCodeGet: no payment code in the reply")
	}
	code := strings.TrimSpace(data.Barcode[0])
	if code == "" || len(code) > 512 {
		return "", fmt.Errorf("card batchGetBarCodeGet: the payment code is empty or over 512 bytes (%d)", len(code))
	}
	return code, nil
}

// cardText is an identifier the card sends as a JSON string or number (pkucli's types do not
// say which; §1.2 notes numbers as strings elsewhere).
type cardText string

func (t *cardText) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = cardText(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("want a string or a number, got %.40s", b)
	}
	*t = cardText(n.String())
	return nil
}
