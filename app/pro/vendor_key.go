package pro

// BuiltInPublicKey is the vendor's Ed25519 public key (base64) that every
// build trusts. Licence keys signed with its private half verify with no
// configuration; MAILSVC_LICENSE_PUBLIC_KEYS adds more trusted keys. The
// private half is never in this repository: `mailsvc license keygen`
// makes a pair, and a vendor that rotates keys replaces this constant.
const BuiltInPublicKey = "NN8Eu1n40BOkMr+xLHFRAGTkCxzLJF6GpSxjNH+hGlI="
