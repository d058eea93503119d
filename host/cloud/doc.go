// Package cloud is the host's side of PKU harness Cloud (seed 003 "PKU harness Cloud" and
// "插件指南" §1–5): the provider setting (off by default), the `GET /v1/meta` check that
// "test connection" shows, the device identity and channel keys sealed with the host's vault,
// per-plugin consent, availability, status() and the offline behaviour.
//
// A Manager is the Cloud connection of one host database (For). It hands each plugin a
// Plugin, the consent-gated handle the plugin's code uses: Store (end-to-end when the
// manifest says `e2e: true`, which refuses plaintext writes), OpenChannel/ResumeChannel
// (channels whose SecretLink prints "[secret link]", mailbox and kick on the channel), Call
// (server functions) and Status. Until the person allows a plugin, each of its calls fails
// with an *Error of code CodeConsentRequired; a consent names the provider host it was given
// for, the time, and the disclosure the person read, and lapses when the provider changes.
//
// Offline (the provider unreachable), store reads come from a local mirror the host keeps
// per plugin in its database (sealed with the vault, updated on every successful read and
// write); writes and function calls fail at once with CodeOffline and are never queued;
// channels reconnect by themselves with the client's backoff.
//
// What a consent allowed ends with it: withdrawing it, turning Cloud off, changing provider
// and removing the plugin (ForgetPlugin) forget the channel keys in the same transaction and
// close the channels on the provider, from whichever process does it; a close the provider
// does not confirm is kept in cloud_closing and done by ClosePending later. Saved channels are
// bound to the id of the consent they were opened under and never resumed under another.
//
// Tables (migrations 500–599): cloud_settings, cloud_secrets (vault-sealed identity and
// channel records), cloud_consent, cloud_mirror, cloud_closing (pending closes),
// cloud_leftover (data a removed plugin left with a provider).
package cloud
