package assets

// Embedded exposes the embedded bytes of the Mermaid build to the tests.
var Embedded = mermaidJS
