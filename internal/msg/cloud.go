package msg

// The messages of `harness cloud use|status|consent|forget` (seed 003 "插件指南" §2–3).
const (
	CloudUsing       Key = "cloud.using"        // %[1]s provider origin, %[2]s services, %[3]s operator
	CloudLimits      Key = "cloud.limits"       // %[1]d keys, %[2]d bytes per plugin, %[3]d open channels
	CloudOff         Key = "cloud.off"          //
	CloudStatusOff   Key = "cloud.status.off"   //
	CloudStatusHead  Key = "cloud.status.head"  // %[1]s kind (custom/official), %[2]s base URL, %[3]s online or offline
	CloudOnline      Key = "cloud.online"       //
	CloudOffline     Key = "cloud.offline"      //
	CloudDevice      Key = "cloud.device"       // %[1]s registered or not yet
	CloudDeviceYes   Key = "cloud.device.yes"   //
	CloudDeviceNo    Key = "cloud.device.no"    //
	CloudNoPlugins   Key = "cloud.noPlugins"    //
	CloudPluginsHead Key = "cloud.pluginsHead"  // the plugin table's header
	CloudAllowed     Key = "cloud.allowed"      //
	CloudNotAllowed  Key = "cloud.notAllowed"   //
	CloudAvailable   Key = "cloud.available"    //
	CloudE2E         Key = "cloud.e2e"          //
	CloudNotE2E      Key = "cloud.notE2E"       //
	CloudConsentHead Key = "cloud.consent.head" // %[1]s plugin, %[2]s provider host
	CloudConsentE2E  Key = "cloud.consent.e2e"  // %[1]s the E2E badge
	CloudConsentUses Key = "cloud.consent.uses" // %[1]s services
	CloudConsentOn   Key = "cloud.consent.on"   // %[1]s plugin, %[2]s provider host
	CloudBackend     Key = "cloud.backend"      // %[1]s the external backend URL
	// CloudConsentFunctions lists the server functions a consent covers: %[1]s the names.
	CloudConsentFunctions Key = "cloud.consent.functions"
	// CloudConsentAsk is requestConsent() on the CLI: %[1]s the plugin, %[2]s the provider host.
	CloudConsentAsk Key = "cloud.consent.ask"
	// CloudConsentAskSetup is requestConsent() with no provider set: %[1]s the plugin.
	CloudConsentAskSetup Key = "cloud.consent.askSetup"
	CloudConsentOff      Key = "cloud.consent.off" // %[1]s plugin
	CloudNoDecl          Key = "cloud.noDecl"      // %[1]s plugin
	CloudNoProvider      Key = "cloud.noProvider"  //
	CloudCleared         Key = "cloud.cleared"     // %[1]s plugin
	CloudForgotten       Key = "cloud.forgotten"   // %[1]s provider host
	CloudForgetAsk       Key = "cloud.forget.ask"  // %[1]s provider host
	CloudNotForgot       Key = "cloud.forget.no"   //
	// CloudClosing says how many channels the provider has not confirmed closed: %[1]d the
	// count, %[2]s the plugin.
	CloudClosing Key = "cloud.closing"
	// CloudDataKept is a removal that kept the plugin's Cloud data: %[1]s the plugin.
	CloudDataKept Key = "cloud.data.kept"
	// CloudDataDeleted is a removal that deleted it: %[1]s the plugin.
	CloudDataDeleted Key = "cloud.data.deleted"

	CloudWhyNoProvider Key = "cloud.why.noProvider" //
	CloudWhyConsent    Key = "cloud.why.consent"    //
	CloudWhyOffline    Key = "cloud.why.offline"    //
	CloudWhyNotOffered Key = "cloud.why.notOffered" // %[1]s provider host, %[2]s services

	// CloudUnreachable is a provider URL that did not answer: %[1]s the origin, %[2]s why (one
	// of the CloudNet* reasons, or the network's own words).
	CloudUnreachable Key = "cloud.unreachable"
	// CloudNotProvider is a URL that answered, but not as a Cloud provider: %[1]s the origin,
	// %[2]s why.
	CloudNotProvider Key = "cloud.notProvider"
	CloudNetRefused  Key = "cloud.net.refused" //
	CloudNetTimeout  Key = "cloud.net.timeout" //
	CloudNetNoHost   Key = "cloud.net.noHost"  //
)

func init() {
	for k, e := range map[Key]entry{
		CloudUsing:            {"已使用云服务 %[1]s（运营者：%[3]s）；提供的服务：%[2]s", "using Cloud provider %[1]s (operated by %[3]s); services: %[2]s"},
		CloudLimits:           {"每个插件的存储配额：%[1]d 个键、%[2]d 字节；最多同时打开 %[3]d 个通道", "store quota per plugin: %[1]d keys, %[2]d bytes; at most %[3]d open channels"},
		CloudOff:              {"云服务已关闭", "Cloud is off"},
		CloudStatusOff:        {"云服务：关闭（用 harness cloud use URL 设置服务商）", "Cloud: off (set a provider with harness cloud use URL)"},
		CloudStatusHead:       {"云服务：%[1]s %[2]s（%[3]s）", "Cloud: %[1]s %[2]s (%[3]s)"},
		CloudOnline:           {"在线", "online"},
		CloudOffline:          {"连不上", "offline"},
		CloudDevice:           {"本设备：%[1]s", "this device: %[1]s"},
		CloudDeviceYes:        {"已注册", "registered"},
		CloudDeviceNo:         {"尚未注册（第一次使用时注册）", "not registered yet (registers on first use)"},
		CloudNoPlugins:        {"没有插件使用云服务", "no plugin uses Cloud"},
		CloudPluginsHead:      {"插件\t服务\t加密\t授权\t状态\t用量", "PLUGIN\tSERVICES\tE2E\tCONSENT\tSTATUS\tUSED"},
		CloudAllowed:          {"已允许", "allowed"},
		CloudNotAllowed:       {"未允许", "not allowed"},
		CloudAvailable:        {"可用", "available"},
		CloudE2E:              {"端到端加密", "end-to-end encrypted"},
		CloudNotE2E:           {"未端到端加密：服务器能读到存储的内容", "not end-to-end encrypted: the server can read what is stored"},
		CloudConsentHead:      {"插件 %[1]s 想使用云服务 %[2]s。会离开本机的数据：", "Plugin %[1]s wants to use the Cloud provider %[2]s. What leaves this device:"},
		CloudConsentE2E:       {"加密：%[1]s", "encryption: %[1]s"},
		CloudConsentUses:      {"用到的服务：%[1]s", "services used: %[1]s"},
		CloudBackend:          {"外部后端：%[1]s（数据也会发到这里）", "external backend: %[1]s (data goes there too)"},
		CloudConsentFunctions: {"服务端函数：%[1]s", "server functions: %[1]s"},
		CloudConsentAsk:       {"%[1]s 需要你同意才能使用云服务 %[2]s：运行 harness cloud consent %[1]s on（会先列出哪些数据会离开本机）", "%[1]s needs your consent to use Cloud with %[2]s: run harness cloud consent %[1]s on (it shows first what data leaves this device)"},
		CloudConsentAskSetup:  {"%[1]s 要使用云服务，但还没有设置服务商：先运行 harness cloud use URL，再运行 harness cloud consent %[1]s on", "%[1]s uses Cloud, and no provider is set: run harness cloud use URL, then harness cloud consent %[1]s on"},
		CloudConsentOn:        {"已允许 %[1]s 使用云服务 %[2]s", "allowed %[1]s to use Cloud provider %[2]s"},
		CloudConsentOff:       {"已不再允许 %[1]s 使用云服务；它的云服务调用会被拒绝", "%[1]s may no longer use Cloud; its cloud calls are refused"},
		CloudNoDecl:           {"插件 %[1]s 不使用云服务（清单里没有 cloud 段）", "plugin %[1]s does not use Cloud (no cloud: section in its manifest)"},
		CloudNoProvider:       {"没有设置云服务商：先运行 harness cloud use URL", "no Cloud provider is set: run harness cloud use URL first"},
		CloudCleared:          {"已清除 %[1]s 的云端数据", "cleared the cloud data of %[1]s"},
		CloudForgotten:        {"已删除本设备在 %[1]s 上的全部云端数据，并忘掉了设备身份", "deleted all of this device's cloud data on %[1]s and forgot the device identity"},
		CloudForgetAsk:        {"删除本设备在 %[1]s 上的全部云端数据（存储、通道、设备）？", "Delete all of this device's cloud data on %[1]s (store, channels, the device)?"},
		CloudNotForgot:        {"没有删除任何数据", "nothing was deleted"},
		CloudClosing:          {"%[2]s 的 %[1]d 个通道还没能在云服务商那里关闭（连不上）；密钥已忘掉，下次启动时会再关闭，旧链接不会再收到任何内容", "%[1]d channel(s) of %[2]s could not be closed on the provider yet (unreachable); their keys are forgotten, they are closed at the next start, and the old links receive nothing more"},
		CloudDataKept:         {"%[1]s 存在云服务商上的数据保留了（用 --delete-cloud-data 可一并删除）；以后再装同一 id 的插件时，会先删掉它们再允许使用云服务", "what %[1]s stored with the Cloud provider is kept (--delete-cloud-data deletes it too); a plugin installed later under the same id has it deleted before it may use Cloud"},
		CloudDataDeleted:      {"已删除 %[1]s 存在云服务商上的数据", "deleted what %[1]s stored with the Cloud provider"},
		CloudUnreachable:      {"连不上 %[1]s：%[2]s", "cannot reach %[1]s: %[2]s"},
		CloudNotProvider:      {"%[1]s 不是云服务商：%[2]s", "%[1]s is not a Cloud provider: %[2]s"},
		CloudNetRefused:       {"连接被拒绝", "connection refused"},
		CloudNetTimeout:       {"没有回应", "no answer"},
		CloudNetNoHost:        {"找不到这个主机", "no such host"},

		CloudWhyNoProvider: {"没有设置云服务商", "no Cloud provider is set"},
		CloudWhyConsent:    {"还没有允许这个插件使用云服务", "you have not allowed this plugin to use Cloud yet"},
		CloudWhyOffline:    {"连不上云服务商", "the provider cannot be reached"},
		CloudWhyNotOffered: {"%[1]s 不提供 %[2]s", "%[1]s does not offer %[2]s"},
	} {
		catalogue[k] = e
	}
}
