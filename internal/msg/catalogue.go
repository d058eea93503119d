package msg

// Key names one message of the catalogue.
type Key string

// entry is one message in both languages.
type entry struct{ zh, en string }

// The keys. Grouped by the command that prints them; the formats are in catalogue below.
const (
	NewDataDir Key = "data.created" // %[1]s the folder
	NoDataDir  Key = "data.none"    // %[1]s the folder

	Confirm   Key = "confirm"        // %[1]s the question
	Official  Key = "kind.official"  // the kind of an official plugin
	Community Key = "kind.community" // the kind of a community plugin
	None      Key = "none"           // an empty list

	InstallPrompt       Key = "install.prompt"       // %[1]s plugin id
	NotInstalled        Key = "install.declined"     //
	InstallNotConfirmed Key = "install.notConfirmed" //
	Installed           Key = "install.done"         // %[1]s id, %[2]s version, %[3]s kind
	AlreadyInstalled    Key = "install.already"      // %[1]s id, %[2]s installed version

	UpToDate          Key = "update.current"     // %[1]s id, %[2]s version
	Updated           Key = "update.applied"     // %[1]s id, %[2]s from, %[3]s to
	SameVersion       Key = "update.sameVersion" // %[1]s id, %[2]s version
	RemoteRefreshed   Key = "update.remote"      // %[1]s id, %[2]s what changed
	UpdateHeld        Key = "update.held"        // %[1]s id, %[2]s version, %[3]s what it widens
	NotChecked        Key = "update.skipped"     // %[1]s id, %[2]s version
	UpdateFailed      Key = "update.failed"      // %[1]s id, %[2]s why
	SomeUpdatesFailed Key = "update.someFailed"  //
	RolledBack        Key = "rollback.done"      // %[1]s id, %[2]s from, %[3]s to
	RolledForward     Key = "rollforward.done"   // %[1]s id, %[2]s from, %[3]s to

	Widens            Key = "accept.widens"      // %[1]s id, %[2]s from, %[3]s to, %[4]s what
	AcceptPrompt      Key = "accept.prompt"      //
	NotUpdated        Key = "accept.declined"    //
	UpdateNotAccepted Key = "accept.notAccepted" //

	Enabled       Key = "enable.done"     // %[1]s id
	Disabled      Key = "disable.done"    // %[1]s id
	Removed       Key = "remove.done"     // %[1]s id
	AutoUpdateOn  Key = "autoupdate.on"   // %[1]s id
	AutoUpdateOff Key = "autoupdate.off"  // %[1]s id
	ModeSet       Key = "mode.done"       // %[1]s id, %[2]s effect, %[3]s mode
	ListDisabled  Key = "list.disabled"   // a tag in `plugins list`
	ListHeld      Key = "list.held"       // %[1]s the held version
	ListRemote    Key = "list.remote"     // the version column of a remote plugin
	ShowKind      Key = "show.kind"       // %[1]s kind
	ShowKindRmt   Key = "show.kindRemote" // %[1]s kind
	// ShowKindBuiltin is the kind line of a built-in plugin: %[1]s kind (Official).
	ShowKindBuiltin Key = "show.kindBuiltin"
	// ListBuiltin is the kind column of a built-in plugin in plugins list.
	ListBuiltin   Key = "list.builtin"
	ShowSource    Key = "show.source"     // %[1]s
	ShowHash      Key = "show.hash"       // %[1]s
	ShowEnabled   Key = "show.enabled"    // %[1]s yes or no
	ShowAuto      Key = "show.autoUpdate" // %[1]s yes or no
	ShowNote      Key = "show.note"       // %[1]s
	ShowPrevious  Key = "show.previous"   // %[1]s id, %[2]s version
	ShowNewer     Key = "show.newer"      // %[1]s id, %[2]s version
	ShowHeld      Key = "show.held"       // %[1]s id, %[2]s version, %[3]s what it widens
	ShowCampus    Key = "show.campus"     // %[1]s
	ShowNetwork   Key = "show.network"    // %[1]s
	ShowAbilities Key = "show.abilities"  // %[1]s
	ShowModes     Key = "show.modes"      // %[1]s
	ShowTools     Key = "show.tools"      //
	Yes           Key = "yes"             //
	No            Key = "no"              //

	VersionsHeader Key = "versions.header"  // tab-separated column titles
	RoleCurrent    Key = "versions.current" //
	RolePrevious   Key = "versions.previous"
	RoleNewer      Key = "versions.newer"
	RoleHeld       Key = "versions.held"

	RemoteHead       Key = "remote.sheet.head"         // %[1]s id, %[2]s title, %[3]s version
	RemoteServer     Key = "remote.sheet.server"       // %[1]s URL, %[2]s token line
	RemoteNoToken    Key = "remote.sheet.noToken"      //
	RemoteToken      Key = "remote.sheet.token"        //
	RemoteReaches    Key = "remote.sheet.reaches"      //
	RemoteTools      Key = "remote.sheet.tools"        //
	RemoteRunsFree   Key = "remote.sheet.auto"         //
	RemoteAsksFirst  Key = "remote.sheet.ask"          //
	RemoteInstrs     Key = "remote.sheet.instructions" //
	RemoteInstalled  Key = "remote.installed"          // %[1]s id, %[2]d tools
	RemoteNewTool    Key = "remote.change.new"         // %[1]s tool, %[2]s effect
	RemoteEffect     Key = "remote.change.effect"      // %[1]s tool, %[2]s effect now, %[3]s before
	RemoteGoneTool   Key = "remote.change.removed"     // %[1]s tool
	RemoteLoosened   Key = "remote.change.loosened"    // %[1]s tools, %[2]s changes
	RemoteUnchanged  Key = "remote.change.none"        // %[1]d tools
	RemoteListHeader Key = "remote.list.header"        // tab-separated column titles
	RemoteModeSet    Key = "remote.mode.done"          // %[1]s id, %[2]s effect, %[3]s mode
	RemoteRemoved    Key = "remote.remove.done"        // %[1]s id

	// How an update widens a plugin's reach (host.Widening), and the effects.
	WidenCampus   Key = "widen.campus"   // %[1]s service
	WidenWebsite  Key = "widen.website"  // %[1]s host
	WidenAbility  Key = "widen.ability"  // %[1]s ability group
	WidenCloud    Key = "widen.cloud"    // %[1]s Cloud service
	WidenRemote   Key = "widen.remote"   // %[1]s server
	WidenNewTool  Key = "widen.newTool"  // %[1]s tool, %[2]s effect
	WidenEffect   Key = "widen.effect"   // %[1]s tool, %[2]s effect before, %[3]s now
	WidenUserOnly Key = "widen.userOnly" // %[1]s tool
	// WidenCallsUserOnly: %[1]s tool, %[2]s the userOnly tool it now calls.
	WidenCallsUserOnly Key = "widen.callsUserOnly"
	WidenSep           Key = "widen.sep" // between two widenings
	EffectRead         Key = "effect.read"
	EffectWrite        Key = "effect.write"
	EffectMoney        Key = "effect.money"
	EffectPublic       Key = "effect.public"

	// Errors of the host a command says in the run's language (host.NotFound, host.Conflict).
	ErrNotInstalled   Key = "err.notInstalled"    // %[1]s id
	ErrNoPrevious     Key = "err.noPrevious"      // %[1]s id, %[2]s version in use
	ErrNoPreviousNewr Key = "err.noPreviousNewer" // %[1]s id, %[2]s in use, %[3]s newer
	ErrNoNewer        Key = "err.noNewer"         // %[1]s id, %[2]s version in use
	ErrNoHeld         Key = "err.noHeld"          // %[1]s id
)

// catalogue holds every message; TestCatalogue checks both languages of each.
var catalogue = map[Key]entry{
	ErrNotInstalled: {"没有安装插件 %[1]q", "no plugin %[1]q is installed"},
	ErrNoPrevious: {"插件 %[1]s 没有上一个版本可回退：比 %[2]s 更早的版本没有保留",
		"plugin %[1]s has no previous version to roll back to: nothing older than %[2]s is kept"},
	ErrNoPreviousNewr: {"插件 %[1]s 没有上一个版本可回退：比 %[2]s 更早的版本没有保留（较新的 %[3]s 还在：harness plugins rollforward %[1]s）",
		"plugin %[1]s has no previous version to roll back to: nothing older than %[2]s is kept (%[3]s is newer: harness plugins rollforward %[1]s)"},
	ErrNoNewer: {"插件 %[1]s 没有较新的版本可恢复：%[2]s 已是保留的最新版本",
		"plugin %[1]s has no newer version to roll forward to: %[2]s is the newest kept"},
	ErrNoHeld: {"插件 %[1]s 没有等待审核的更新", "plugin %[1]s has no update waiting for review"},

	WidenCampus:        {"新的校园服务 %[1]s", "new campus service %[1]s"},
	WidenWebsite:       {"新的网站 %[1]s", "new website %[1]s"},
	WidenAbility:       {"新的应用功能 %[1]s", "new app feature %[1]s"},
	WidenCloud:         {"新的云服务 %[1]s", "new cloud service %[1]s"},
	WidenRemote:        {"远程服务器 %[1]s", "remote server %[1]s"},
	WidenNewTool:       {"新的%[2]s类工具 %[1]s", "new %[2]s tool %[1]s"},
	WidenEffect:        {"工具 %[1]s：%[2]s → %[3]s", "tool %[1]s: %[2]s → %[3]s"},
	WidenUserOnly:      {"工具 %[1]s 不再只限你本人使用（userOnly）", "tool %[1]s is no longer userOnly"},
	WidenSep:           {"；", "; "},
	WidenCallsUserOnly: {"工具 %[1]s 现在会调用只限你本人使用的工具 %[2]s", "tool %[1]s now calls userOnly tool %[2]s"},
	EffectRead:         {"读取", "read"},
	EffectWrite:        {"修改", "write"},
	EffectMoney:        {"花钱", "money"},
	EffectPublic:       {"公开", "public"},

	NewDataDir: {"harness: 新建了数据目录 %[1]s（如果你是想用已有的数据，请检查 --data 的路径）",
		"harness: created a new data directory at %[1]s (if you meant an existing one, check the --data path)"},
	NoDataDir: {"%[1]s 还没有数据目录：还没有安装或保存任何东西（harness serve 或任何会保存的命令会新建它；要用别的目录请给 --data）",
		"no data directory at %[1]s yet: nothing is installed or stored (harness serve, or any command that stores something, creates it; --data names another)"},

	Confirm:   {"%[1]s [y/N] ", "%[1]s [y/N] "},
	Official:  {"官方", "Official"},
	Community: {"社区", "Community"},
	None:      {"无", "none"},

	InstallPrompt:       {"安装 %[1]s？", "Install %[1]s?"},
	NotInstalled:        {"未安装", "not installed"},
	InstallNotConfirmed: {"没有确认安装", "the install was not confirmed"},
	Installed:           {"已安装 %[1]s %[2]s（%[3]s）", "installed %[1]s %[2]s (%[3]s)"},
	AlreadyInstalled: {"插件 %[1]s 已经安装（%[2]s）；检查更新请用 harness plugins update %[1]s",
		"plugin %[1]s is already installed (%[2]s); use harness plugins update %[1]s"},

	UpToDate:          {"%[1]s：已是最新（%[2]s）", "%[1]s: already up to date (%[2]s)"},
	Updated:           {"%[1]s：已更新 %[2]s → %[3]s", "%[1]s: updated %[2]s → %[3]s"},
	SameVersion:       {"%[1]s：内容有变化，版本号仍是 %[2]s", "%[1]s: content changed, same version %[2]s"},
	RemoteRefreshed:   {"%[1]s：%[2]s", "%[1]s: %[2]s"},
	UpdateHeld:        {"%[1]s：更新到 %[2]s 需要你审核：%[3]s（harness plugins accept %[1]s）", "%[1]s: update to %[2]s held for review: %[3]s (harness plugins accept %[1]s)"},
	NotChecked:        {"%[1]s：未检查（%[2]s）", "%[1]s: not checked (%[2]s)"},
	UpdateFailed:      {"%[1]s：检查更新失败：%[2]s", "%[1]s: update check failed: %[2]s"},
	SomeUpdatesFailed: {"有的插件没能检查更新", "some updates could not be checked"},
	RolledBack:        {"%[1]s：已回退 %[2]s → %[3]s", "%[1]s: rolled back %[2]s → %[3]s"},
	RolledForward:     {"%[1]s：已恢复较新的版本 %[2]s → %[3]s", "%[1]s: rolled forward %[2]s → %[3]s"},

	Widens:            {"%[1]s %[2]s → %[3]s 扩大了权限：%[4]s", "%[1]s %[2]s → %[3]s widens: %[4]s"},
	AcceptPrompt:      {"接受这个更新？", "Accept the update?"},
	NotUpdated:        {"未更新", "not updated"},
	UpdateNotAccepted: {"没有接受更新", "the update was not accepted"},

	Enabled:         {"%[1]s：已启用", "%[1]s: enabled"},
	Disabled:        {"%[1]s：已停用", "%[1]s: disabled"},
	Removed:         {"%[1]s：已卸载", "%[1]s: removed"},
	AutoUpdateOn:    {"%[1]s：自动更新已开启", "%[1]s: automatic updates on"},
	AutoUpdateOff:   {"%[1]s：自动更新已关闭", "%[1]s: automatic updates off"},
	ModeSet:         {"%[1]s：%[2]s 类工具设为 %[3]s", "%[1]s: %[2]s tools %[3]s"},
	ListDisabled:    {"已停用", "disabled"},
	ListHeld:        {"待审核更新：%[1]s", "update-held:%[1]s"},
	ListRemote:      {"远程", "remote"},
	ListBuiltin:     {"内置", "Built-in"},
	ShowKindBuiltin: {"  类型：      %[1]s，内置", "  kind:        %[1]s, builtin"},
	ShowKind:        {"  类型：      %[1]s", "  kind:        %[1]s"},
	ShowKindRmt:     {"  类型：      %[1]s，远程", "  kind:        %[1]s, remote"},
	ShowSource:      {"  来源：      %[1]s", "  source:      %[1]s"},
	ShowHash:        {"  哈希：      %[1]s", "  hash:        %[1]s"},
	ShowEnabled:     {"  启用：      %[1]s", "  enabled:     %[1]s"},
	ShowAuto:        {"  自动更新：  %[1]s", "  auto-update: %[1]s"},
	ShowNote:        {"  备注：      %[1]s", "  note:        %[1]s"},
	ShowPrevious:    {"  上一版本：  %[2]s（harness plugins rollback %[1]s）", "  previous:    %[2]s (harness plugins rollback %[1]s)"},
	ShowNewer:       {"  较新版本：  %[2]s（harness plugins rollforward %[1]s）", "  newer:       %[2]s (harness plugins rollforward %[1]s)"},
	ShowHeld:        {"  待审核更新：%[2]s：%[3]s（harness plugins accept %[1]s）", "  held update: %[2]s: %[3]s (harness plugins accept %[1]s)"},
	ShowCampus:      {"  校园服务：  %[1]s", "  campus:      %[1]s"},
	ShowNetwork:     {"  网站：      %[1]s", "  network:     %[1]s"},
	ShowAbilities:   {"  应用功能：  %[1]s", "  abilities:   %[1]s"},
	ShowModes:       {"  权限模式：  %[1]s", "  modes:       %[1]s"},
	ShowTools:       {"  工具：", "  tools:"},
	Yes:             {"是", "true"},
	No:              {"否", "false"},

	VersionsHeader: {"角色\t版本\t哈希\t获取时间", "ROLE\tVERSION\tHASH\tFETCHED"},
	RoleCurrent:    {"当前", "current"},
	RolePrevious:   {"上一版本", "previous"},
	RoleNewer:      {"较新", "newer"},
	RoleHeld:       {"待审核", "held"},

	RemoteHead:       {"远程插件 %[1]s — %[2]s %[3]s（社区）", "Remote plugin %[1]s — %[2]s %[3]s (Community)"},
	RemoteServer:     {"服务器：%[1]s（%[2]s）", "Server:   %[1]s (%[2]s)"},
	RemoteNoToken:    {"无令牌", "no token"},
	RemoteToken:      {"令牌由主程序保管，模型看不到", "bearer token kept by the host, never shown to the model"},
	RemoteReaches:    {"访问：  只访问这个服务器；它拿不到你的校园登录状态或密码", "Reaches:  that server only; it never gets your campus session or password"},
	RemoteTools:      {"工具：", "Tools:"},
	RemoteRunsFree:   {"直接运行", "runs without asking"},
	RemoteAsksFirst:  {"先问你", "asks you first"},
	RemoteInstrs:     {"给助手的说明：", "Instructions for the assistant:"},
	RemoteInstalled:  {"已安装 %[1]s（%[2]d 个工具）", "installed %[1]s (%[2]d tools)"},
	RemoteNewTool:    {"新工具 %[1]s（%[2]s）", "new tool %[1]s (%[2]s)"},
	RemoteEffect:     {"%[1]s 现在是 %[2]s（原来是 %[3]s）", "%[1]s is now %[2]s (was %[3]s)"},
	RemoteGoneTool:   {"移除了工具 %[1]s", "removed tool %[1]s"},
	RemoteLoosened:   {"没有更新：%[1]s 将不再先问你就运行（%[2]s）；要用新的工具，移除这个插件再添加一次，看过它的审查页", "not updated: %[1]s would run without asking you (%[2]s); to use the new tools, remove the plugin and add it again through its review sheet"},
	RemoteUnchanged:  {"%[1]d 个工具，没有变化", "%[1]d tools, unchanged"},
	RemoteListHeader: {"ID\t工具数\t启用\tURL", "ID\tTOOLS\tENABLED\tURL"},
	RemoteModeSet:    {"%[1]s：%[2]s 类工具现在是 %[3]s", "%[1]s: %[2]s tools are now %[3]s"},
	RemoteRemoved:    {"已卸载 %[1]s", "removed %[1]s"},
}
