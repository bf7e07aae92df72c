// mvdan-sh ships no type declarations; src/execute/shell.ts reads its raw GopherJS objects
// through its own checked accessors, so the module is typed as unknown here.
declare module 'mvdan-sh' {
  const syntax: unknown;
  export { syntax };
}
