package protocol

// A fast path for the frames the relay handles most: flat objects with the keys t, to, peerId
// and env (an object of v, n, c), plain ASCII strings without escapes, no duplicate keys.
// Anything else (an escape, a non-ASCII byte, null, another key, a duplicate) makes it give up,
// and the strict encoding/json decoder decides instead; FuzzFastFrame checks that whenever the
// fast path accepts, encoding/json reads exactly the same values.

type fastBacking struct {
	w             frameWire
	t, to, peerID string
	env           Envelope
}

type fastParser struct {
	d []byte
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.d) {
		switch p.d[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) eat(c byte) bool {
	if p.i < len(p.d) && p.d[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string without escapes or non-ASCII bytes.
func (p *fastParser) str() ([]byte, bool) {
	if !p.eat('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.d) {
		c := p.d[p.i]
		switch {
		case c == '"':
			s := p.d[start:p.i]
			p.i++
			return s, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// small reads a non-negative integer of at most 9 digits without a leading zero.
func (p *fastParser) small() (int, bool) {
	start, n := p.i, 0
	for p.i < len(p.d) && p.d[p.i] >= '0' && p.d[p.i] <= '9' {
		n = n*10 + int(p.d[p.i]-'0')
		p.i++
	}
	l := p.i - start
	if l == 0 || l > 9 || l > 1 && p.d[start] == '0' {
		return 0, false
	}
	if p.i < len(p.d) {
		switch p.d[p.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	return n, true
}

// object calls field for each key of an object; field parses the value.
func (p *fastParser) object(field func(key []byte) bool) bool {
	p.ws()
	if !p.eat('{') {
		return false
	}
	p.ws()
	if p.eat('}') {
		return true
	}
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return false
		}
		p.ws()
		if !p.eat(':') {
			return false
		}
		p.ws()
		if !field(key) {
			return false
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		return p.eat('}')
	}
}

func (p *fastParser) strInto(dst *string, ptr **string) bool {
	if *ptr != nil {
		return false // duplicate key: let encoding/json decide
	}
	s, ok := p.str()
	if !ok {
		return false
	}
	*dst = string(s)
	*ptr = dst
	return true
}

func (p *fastParser) env(e *Envelope) bool {
	var seenV, seenN, seenC bool
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "v":
			if seenV {
				return false
			}
			seenV = true
			v, ok := p.small()
			e.V = v
			return ok
		case "n", "c":
			seen, dst := &seenN, &e.N
			if key[0] == 'c' {
				seen, dst = &seenC, &e.C
			}
			if *seen {
				return false
			}
			*seen = true
			s, ok := p.str()
			*dst = string(s)
			return ok
		}
		return false
	})
}

// fastFrame parses data on the fast path; ok is false when the strict decoder must decide.
func fastFrame(data []byte) (*frameWire, bool) {
	b := &fastBacking{}
	p := fastParser{d: data}
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "t":
			if b.w.T != nil {
				return false
			}
			s, ok := p.str()
			switch string(s) { // the common types without an allocation
			case FrameMsg:
				b.t = FrameMsg
			case FramePing:
				b.t = FramePing
			default:
				b.t = string(s)
			}
			b.w.T = &b.t
			return ok
		case "to":
			return p.strInto(&b.to, &b.w.To)
		case "peerId":
			return p.strInto(&b.peerID, &b.w.PeerID)
		case "env":
			if b.w.Env != nil || !p.env(&b.env) {
				return false
			}
			b.w.Env = &b.env
			return true
		}
		return false
	})
	p.ws()
	if !ok || p.i != len(data) {
		return nil, false
	}
	return &b.w, true
}
