// Jest's CommonJS runtime on Node 22 cannot require() an ES module (it can on Node 24.9+), and Nest 12, its
// companion packages and uuid 14 ship ES modules only. The service itself loads them through Node's own
// require(esm); only the tests need them as CommonJS, which TypeScript's transpiler (already here for ts-jest)
// makes: imports become require() and import() a required promise. `import.meta` has no CommonJS syntax: its
// URL and dirname are the module file's, resolve() is require.resolve() (used by the packages to probe optional peers),
// and the createRequire() they build from it is the module's own require.
const { pathToFileURL } = require('node:url');
const ts = require('typescript');

const OWN_REQUIRE = /^\s*const require = createRequire\(import\.meta\.url\);\s*$/m;

module.exports = {
  process(source, filename) {
    const commonJsSource = source
      .replace(OWN_REQUIRE, '')
      .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(filename).href))
      .replaceAll('import.meta.dirname', '__dirname')
      .replaceAll('import.meta.resolve(', 'require.resolve(');
    const { outputText } = ts.transpileModule(commonJsSource, {
      fileName: filename,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2023,
        esModuleInterop: true,
        allowJs: true,
        sourceMap: false,
      },
    });
    return { code: outputText };
  },
};
