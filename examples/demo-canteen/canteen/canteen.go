// Package canteen is the demo remote plugin of seed 003 §快速上手:远程插件
// ("examples/demo-canteen … 使用模拟数据 … 一个读取工具(menu)和一个修改工具
// (reserveSeat),bearer token 是 demo-token"), written in Go with the
// official MCP SDK: a stateless Streamable HTTP MCP server named
// "demo-canteen", so the host installs it as plugin mcp-demo-canteen.
//
// The data is made up. Seat reservations are kept in memory per Handler, so
// a test can see a write take effect.
package canteen

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name is the MCP server name, which is the plugin's registry id (seed 003:
// "id 都必须和 MCP 服务器的 name 一致").
const Name = "demo-canteen"

// DemoToken is the bearer token the demo expects (seed 003 "bearer token 是
// demo-token").
const DemoToken = "demo-token"

// Instructions are the server's instructions: one sentence, as the template
// asks.
const Instructions = "Mock menus of PKU canteens (学一, 学五, 农园, 家园) and seat reservations; all data is made up for testing."

// Dish is one item of a menu.
type Dish struct {
	Name  string  `json:"name" jsonschema:"dish name"`
	Price float64 `json:"price" jsonschema:"price in yuan"`
}

// menus is the mock data: canteen → meal → dishes.
var menus = map[string]map[string][]Dish{
	"学一": {
		"breakfast": {{"豆浆", 1.0}, {"油条", 1.5}, {"鸡蛋灌饼", 4.0}},
		"lunch":     {{"宫保鸡丁", 9.0}, {"番茄炒蛋", 5.0}, {"米饭", 0.5}},
		"dinner":    {{"麻婆豆腐", 5.5}, {"红烧肉", 12.0}, {"米饭", 0.5}},
	},
	"学五": {
		"breakfast": {{"小米粥", 1.0}, {"包子", 1.5}},
		"lunch":     {{"黄焖鸡", 15.0}, {"酸辣土豆丝", 4.0}},
		"dinner":    {{"麻辣香锅", 18.0}, {"炒青菜", 3.5}},
	},
	"农园": {
		"breakfast": {{"煎饼果子", 6.0}, {"豆腐脑", 2.5}},
		"lunch":     {{"烤鸭饭", 16.0}, {"地三鲜", 7.0}},
		"dinner":    {{"牛肉面", 14.0}, {"凉拌黄瓜", 3.0}},
	},
	"家园": {
		"breakfast": {{"馄饨", 7.0}},
		"lunch":     {{"水煮鱼", 20.0}, {"干锅花菜", 8.0}},
		"dinner":    {{"铁板牛柳", 19.0}, {"蒸蛋", 3.0}},
	},
}

// seatsPerCanteen is how many seats each canteen has for reservations.
const seatsPerCanteen = 3

// Canteens returns the canteen names in sorted order.
func Canteens() []string {
	names := make([]string, 0, len(menus))
	for n := range menus {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// MenuInput is the input of menu.
type MenuInput struct {
	Canteen string `json:"canteen" jsonschema:"canteen name: 学一, 学五, 农园 or 家园"`
	Meal    string `json:"meal,omitempty" jsonschema:"breakfast, lunch or dinner; all three when empty"`
}

// MenuOutput is the result of menu.
type MenuOutput struct {
	Canteen string            `json:"canteen"`
	Meals   map[string][]Dish `json:"meals"`
}

// ReserveInput is the input of reserveSeat.
type ReserveInput struct {
	Canteen string `json:"canteen" jsonschema:"canteen name: 学一, 学五, 农园 or 家园"`
	Name    string `json:"name" jsonschema:"the name the seat is reserved under"`
}

// ReserveOutput is the result of reserveSeat.
type ReserveOutput struct {
	Canteen string `json:"canteen"`
	Seat    int    `json:"seat"`
	Left    int    `json:"left"`
}

// Seats is the in-memory reservation book shared by the servers one
// Handler builds (one per request: the server is stateless).
type Seats struct {
	mu    sync.Mutex
	taken map[string][]string // canteen → names, in order
}

// NewServer builds the MCP server with the two tools; book keeps the
// reservations.
func NewServer(book *Seats) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "演示食堂", Version: "0.1.0"},
		&mcp.ServerOptions{Instructions: Instructions})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "menu",
		Title:       "食堂菜单",
		Description: "Today's mock menu of one canteen (学一, 学五, 农园, 家园), for one meal or all; prices in yuan.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in MenuInput) (*mcp.CallToolResult, MenuOutput, error) {
		m, ok := menus[in.Canteen]
		if !ok {
			return nil, MenuOutput{}, fmt.Errorf("unknown canteen %q (known: 学一, 学五, 农园, 家园)", in.Canteen)
		}
		out := MenuOutput{Canteen: in.Canteen, Meals: map[string][]Dish{}}
		for meal, dishes := range m {
			if in.Meal == "" || in.Meal == meal {
				out.Meals[meal] = dishes
			}
		}
		if len(out.Meals) == 0 {
			return nil, MenuOutput{}, fmt.Errorf("unknown meal %q (use breakfast, lunch or dinner)", in.Meal)
		}
		return nil, out, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "reserveSeat",
		Title:       "预约座位",
		Description: "Reserve one seat in a canteen under a name (mock; each canteen has 3 seats). Fails when the canteen is full.",
	}, func(ctx context.Context, req *mcp.CallToolRequest, in ReserveInput) (*mcp.CallToolResult, ReserveOutput, error) {
		if _, ok := menus[in.Canteen]; !ok {
			return nil, ReserveOutput{}, fmt.Errorf("unknown canteen %q (known: 学一, 学五, 农园, 家园)", in.Canteen)
		}
		if in.Name == "" {
			return nil, ReserveOutput{}, fmt.Errorf("name is empty")
		}
		book.mu.Lock()
		defer book.mu.Unlock()
		taken := book.taken[in.Canteen]
		if slices.Contains(taken, in.Name) {
			return nil, ReserveOutput{}, fmt.Errorf("%s already has a seat in %s", in.Name, in.Canteen)
		}
		if len(taken) >= seatsPerCanteen {
			return nil, ReserveOutput{}, fmt.Errorf("%s is full (%d seats)", in.Canteen, seatsPerCanteen)
		}
		book.taken[in.Canteen] = append(taken, in.Name)
		return nil, ReserveOutput{Canteen: in.Canteen, Seat: len(taken) + 1, Left: seatsPerCanteen - len(taken) - 1}, nil
	})
	return s
}

// Handler serves the demo on /mcp: stateless Streamable HTTP (a new server
// per request, as the seed's template does), with JSON replies. When token
// is not empty, a request without "Authorization: Bearer <token>" gets 401
// and the JSON-RPC error -32001 "unauthorized", as in the template.
func Handler(token string) http.Handler {
	book := &Seats{taken: map[string][]string{}}
	mcpH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return NewServer(book) },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	return Authorize(token, mcpH)
}

// Authorize wraps next with the template's optional bearer check: with a
// non-empty token, any other Authorization header is answered 401 with the
// JSON-RPC error -32001.
func Authorize(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32001,"message":"unauthorized"},"id":null}` + "\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
