"""The Mind seed's own examples (shared/seeds/004), as the arguments its tools take."""

# mind_add_edge's example.
CRYPTO_EDGE = {
    "title": "Vercel Edge Functions can't use Node crypto module",
    "description": "Edge runtime is V8 isolate, not Node.js, so crypto module unavailable",
    "workaround": "Use Web Crypto API: self.crypto.randomUUID(), SubtleCrypto.digest()",
    "detection_patterns": [
        {"type": "code", "pattern": "crypto\\.randomUUID|crypto\\.createHash", "description": "Node crypto usage"},
        {"type": "context", "pattern": "edge.*crypto|crypto.*edge", "description": "Crypto in edge context"},
    ],
    "symptoms": ["crypto is not defined", "Module not found: crypto"],
    "root_cause": "Edge runtime is V8 isolate without Node.js APIs",
    "share_with_community": True,
}
