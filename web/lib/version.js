// The package version. Kept as a constant (not read from package.json at run
// time, which browsers and bundlers cannot do portably); tests/wasm checks
// that it equals package.json's "version".
export const version = '0.1.0';
