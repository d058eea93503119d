package genui

import "sort"

// PropKind is the type of a component prop. Every kind except KindName, KindAction, KindNode
// and KindNodes may also be given as a template string ("${expr}"); a template that is exactly
// one ${expr} keeps the value's type (docs/DECISIONS.md §3), so "${data.free.rooms}" can fill a
// list prop.
type PropKind string

// The prop kinds of the catalogue.
const (
	KindText    PropKind = "text"    // any value, shown as text (a template)
	KindNumber  PropKind = "number"  // a JSON number
	KindBool    PropKind = "boolean" // true or false
	KindEnum    PropKind = "enum"    // one of Prop.Enum
	KindIcon    PropKind = "icon"    // a name from Icons
	KindNumbers PropKind = "numbers" // a list of numbers
	KindList    PropKind = "list"    // a list of any values
	KindAny     PropKind = "any"     // any JSON value
	KindName    PropKind = "name"    // a plain identifier, never a template
	KindAction  PropKind = "action"  // { tool, args, confirm?, then? }
	KindNode    PropKind = "node"    // one node
	KindNodes   PropKind = "nodes"   // a list of nodes
)

// Prop is one prop of a component: its JSON key, kind, whether it must be given, the allowed
// values of an enum, and one line of documentation.
type Prop struct {
	Name     string
	Kind     PropKind
	Required bool
	Enum     []string
	Doc      string
}

// Component is a host component: the value of a node's "type", a one-line summary, and its
// props. Components are drawn by the host with its own theme; documents never carry colours,
// fonts or sizes in pixels.
type Component struct {
	Name    string
	Summary string
	Props   []Prop
}

// Prop returns the prop named name, or nil.
func (c *Component) Prop(name string) *Prop {
	for i := range c.Props {
		if c.Props[i].Name == name {
			return &c.Props[i]
		}
	}
	return nil
}

// Icons is the host icon set (seed 003 §界面扩展 "设计规则"), in the order the docs list it.
var Icons = []string{
	"card", "wifi", "book", "bell", "clock", "location", "sparkles", "key", "person", "qr",
	"warning", "check", "calendar", "bus", "food", "wallet", "library", "room", "school",
	"ticket", "medal", "chart", "search", "globe", "lock", "info", "news", "people", "star",
	"refresh",
}

// Tones are the semantic colours a component may ask for; the host maps them to its theme.
var Tones = []string{"default", "muted", "accent", "positive", "warning", "critical"}

// Sizes are the dashboard widget sizes: sm is a half-width card, md a full-width row, lg a
// large main card (seed 003 §小组件).
var Sizes = []string{"sm", "md", "lg"}

// Thens are the values of an action's "then": what the host does after the tool succeeds.
var Thens = []string{"refresh", "none"}

// Common props every node accepts besides its component's own.
var commonProps = []Prop{
	{Name: "type", Kind: KindName, Required: true, Doc: "the component name"},
	{Name: "when", Kind: KindBool, Doc: "the node and its children are hidden when this is falsy"},
}

// Catalog is the component catalogue, defined once. Schema, MarkdownTable and DescribeCatalog
// are generated from it.
var Catalog = []Component{
	{Name: "Text", Summary: "A run of plain text.", Props: []Prop{
		{Name: "text", Kind: KindText, Required: true, Doc: "the text"},
		{Name: "style", Kind: KindEnum, Enum: []string{"title", "headline", "body", "caption", "mono"}, Doc: "typographic role; default body"},
		{Name: "tone", Kind: KindEnum, Enum: Tones, Doc: "semantic colour; default default"},
		{Name: "maxLines", Kind: KindNumber, Doc: "lines shown before the text is cut with …"},
	}},
	{Name: "Markdown", Summary: "CommonMark text, sanitised: no raw HTML, no images, https links only.", Props: []Prop{
		{Name: "text", Kind: KindText, Required: true, Doc: "the Markdown source"},
		{Name: "maxLines", Kind: KindNumber, Doc: "lines shown before the text is cut with …"},
	}},
	{Name: "Stat", Summary: "A figure with a label, e.g. 12 free rooms.", Props: []Prop{
		{Name: "label", Kind: KindText, Required: true, Doc: "what the figure counts"},
		{Name: "value", Kind: KindText, Required: true, Doc: "the figure"},
		{Name: "unit", Kind: KindText, Doc: "unit shown after the figure, e.g. 间 or min"},
		{Name: "caption", Kind: KindText, Doc: "a line under the figure"},
		{Name: "icon", Kind: KindIcon, Doc: "icon before the label"},
		{Name: "tone", Kind: KindEnum, Enum: Tones, Doc: "semantic colour of the figure"},
	}},
	{Name: "Ring", Summary: "A progress ring: value out of max.", Props: []Prop{
		{Name: "value", Kind: KindNumber, Required: true, Doc: "progress, 0…max"},
		{Name: "max", Kind: KindNumber, Doc: "the full ring; default 1"},
		{Name: "label", Kind: KindText, Doc: "text in the middle"},
		{Name: "caption", Kind: KindText, Doc: "text under the ring"},
		{Name: "tone", Kind: KindEnum, Enum: Tones, Doc: "semantic colour of the arc"},
	}},
	{Name: "Sparkline", Summary: "A small line chart of a list of numbers.", Props: []Prop{
		{Name: "values", Kind: KindNumbers, Required: true, Doc: "the points, oldest first; null leaves a gap"},
		{Name: "label", Kind: KindText, Doc: "accessible description of the chart"},
		{Name: "tone", Kind: KindEnum, Enum: Tones, Doc: "semantic colour of the line"},
	}},
	{Name: "Icon", Summary: "An icon from the host icon set.", Props: []Prop{
		{Name: "name", Kind: KindIcon, Required: true, Doc: "icon name"},
		{Name: "tone", Kind: KindEnum, Enum: Tones, Doc: "semantic colour"},
		{Name: "label", Kind: KindText, Doc: "accessible label"},
	}},
	{Name: "Chip", Summary: "A short tag, e.g. a period range or a status.", Props: []Prop{
		{Name: "text", Kind: KindText, Required: true, Doc: "the tag text"},
		{Name: "icon", Kind: KindIcon, Doc: "icon before the text"},
		{Name: "tone", Kind: KindEnum, Enum: Tones, Doc: "semantic colour"},
	}},
	{Name: "Row", Summary: "Children side by side.", Props: []Prop{
		{Name: "children", Kind: KindNodes, Required: true, Doc: "the nodes"},
		{Name: "gap", Kind: KindEnum, Enum: []string{"none", "sm", "md", "lg"}, Doc: "space between children; default sm"},
		{Name: "align", Kind: KindEnum, Enum: []string{"start", "center", "end", "between"}, Doc: "main-axis alignment; default start"},
		{Name: "wrap", Kind: KindBool, Doc: "wrap onto more lines when full"},
	}},
	{Name: "Column", Summary: "Children one under another.", Props: []Prop{
		{Name: "children", Kind: KindNodes, Required: true, Doc: "the nodes"},
		{Name: "gap", Kind: KindEnum, Enum: []string{"none", "sm", "md", "lg"}, Doc: "space between children; default sm"},
	}},
	{Name: "Grid", Summary: "Children in equal columns (a card grid).", Props: []Prop{
		{Name: "children", Kind: KindNodes, Required: true, Doc: "the nodes, filled row by row"},
		{Name: "columns", Kind: KindNumber, Doc: "columns, 1…6; default 2"},
	}},
	{Name: "List", Summary: "One template per item of a list (a repeat), with an empty state.", Props: []Prop{
		{Name: "items", Kind: KindList, Required: true, Doc: "the list, usually ${data.NAME.items}"},
		{Name: "item", Kind: KindName, Doc: "name of the current item inside template; default item (index is also in scope)"},
		{Name: "template", Kind: KindNode, Required: true, Doc: "the node drawn for each item"},
		{Name: "empty", Kind: KindNode, Doc: "the node drawn when the list is empty"},
		{Name: "limit", Kind: KindNumber, Doc: "items shown at most"},
		{Name: "dividers", Kind: KindBool, Doc: "draw a divider between items"},
	}},
	{Name: "EmptyState", Summary: "A placeholder for no data.", Props: []Prop{
		{Name: "title", Kind: KindText, Required: true, Doc: "one line"},
		{Name: "text", Kind: KindText, Doc: "a longer explanation"},
		{Name: "icon", Kind: KindIcon, Doc: "icon above the title"},
	}},
	{Name: "Divider", Summary: "A thin horizontal rule.", Props: nil},
	{Name: "Button", Summary: "Runs a tool of the plugin when tapped, as the user.", Props: []Prop{
		{Name: "text", Kind: KindText, Required: true, Doc: "the label"},
		{Name: "icon", Kind: KindIcon, Doc: "icon before the label"},
		{Name: "style", Kind: KindEnum, Enum: []string{"primary", "secondary", "plain", "destructive"}, Doc: "emphasis; default secondary"},
		{Name: "action", Kind: KindAction, Required: true, Doc: "{ tool, args, confirm, then }"},
	}},
	{Name: "Field", Summary: "An input whose value is form.NAME in Button args (screens only).", Props: []Prop{
		{Name: "name", Kind: KindName, Required: true, Doc: "key under form.*"},
		{Name: "label", Kind: KindText, Required: true, Doc: "the label"},
		{Name: "input", Kind: KindEnum, Enum: []string{"text", "number", "date", "time", "select"}, Doc: "keyboard and picker; default text"},
		{Name: "options", Kind: KindList, Doc: "the choices of a select: strings or { value, label }"},
		{Name: "placeholder", Kind: KindText, Doc: "shown while empty"},
		{Name: "value", Kind: KindAny, Doc: "the initial value"},
	}},
	{Name: "Switch", Summary: "An on/off input whose value is form.NAME, true or false (screens only).", Props: []Prop{
		{Name: "name", Kind: KindName, Required: true, Doc: "key under form.*"},
		{Name: "label", Kind: KindText, Required: true, Doc: "the label"},
		{Name: "value", Kind: KindBool, Doc: "the initial value; default false"},
	}},
	{Name: "Segmented", Summary: "A choice of a few options shown side by side; its value is form.NAME (screens only).", Props: []Prop{
		{Name: "name", Kind: KindName, Required: true, Doc: "key under form.*"},
		{Name: "label", Kind: KindText, Required: true, Doc: "the label"},
		{Name: "options", Kind: KindList, Required: true, Doc: "2…6 choices: strings or { value, label }"},
		{Name: "value", Kind: KindAny, Doc: "the initial value; default the first option"},
	}},
	{Name: "DateTimeField", Summary: "A date and/or time picker; its value is form.NAME as Unix ms, Beijing time (screens only).", Props: []Prop{
		{Name: "name", Kind: KindName, Required: true, Doc: "key under form.*"},
		{Name: "label", Kind: KindText, Required: true, Doc: "the label"},
		{Name: "mode", Kind: KindEnum, Enum: []string{"date", "time", "datetime"}, Doc: "what is picked; default datetime"},
		{Name: "value", Kind: KindNumber, Doc: "the initial value, Unix ms"},
	}},
	{Name: "ListGroup", Summary: "A titled group of ListRow rows, like a settings section.", Props: []Prop{
		{Name: "title", Kind: KindText, Doc: "the group's heading"},
		{Name: "children", Kind: KindNodes, Required: true, Doc: "the rows, usually ListRow"},
	}},
	{Name: "ListRow", Summary: "One row: a title, a line under it, a value at the end; a tap runs its action.", Props: []Prop{
		{Name: "title", Kind: KindText, Required: true, Doc: "the row's title"},
		{Name: "subtitle", Kind: KindText, Doc: "a line under the title"},
		{Name: "icon", Kind: KindIcon, Doc: "icon before the title"},
		{Name: "value", Kind: KindText, Doc: "text at the end of the row"},
		{Name: "action", Kind: KindAction, Doc: "{ tool, args, confirm, then } run when the row is tapped"},
	}},
	{Name: "Skeleton", Summary: "A loading placeholder of grey lines (the host draws its own while data loads).", Props: []Prop{
		{Name: "lines", Kind: KindNumber, Doc: "lines drawn, 1…8; default 3"},
	}},
	{Name: "QRCode", Summary: "A QR code of a string (e.g. a link).", Props: []Prop{
		{Name: "value", Kind: KindText, Required: true, Doc: "the encoded text, at most 1,000 bytes"},
		{Name: "label", Kind: KindText, Doc: "caption under the code"},
		{Name: "share", Kind: KindBool, Doc: "also offer \"Copy link\" and \"Share…\" (the system share sheet, where the browser has one) for value, which stays on the device; default false"},
	}},
}

// InputComponents are the components whose value a screen's Button args read as form.NAME
// (their "name" prop); a widget has none of them.
var InputComponents = map[string]bool{"Field": true, "Switch": true, "Segmented": true, "DateTimeField": true}

var catalogByName = func() map[string]*Component {
	m := make(map[string]*Component, len(Catalog))
	for i := range Catalog {
		m[Catalog[i].Name] = &Catalog[i]
	}
	return m
}()

// Lookup returns the component named name, or nil.
func Lookup(name string) *Component { return catalogByName[name] }

// componentNames returns the catalogue's component names, sorted.
func componentNames() []string {
	names := make([]string, 0, len(Catalog))
	for _, c := range Catalog {
		names = append(names, c.Name)
	}
	sort.Strings(names)
	return names
}
