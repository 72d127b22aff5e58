import { join, relative, resolve, sep } from 'node:path';
import { Client, Connection, FieldDef, Submittable, types } from 'pg';
import ts from 'typescript';

/**
 * Checks the row types of the raw statements of src/ (`rows<Row>`, `one<Row>`, `bulkRows<Row>` of
 * src/database/sql.ts) against what PostgreSQL says the statements answer. The statement's text is found
 * statically (a small interpreter over the TypeScript syntax, with the type checker resolving names), its
 * result columns come from PostgreSQL's Parse + Describe (nothing runs), and each column's type is compared
 * with its property as pg parses the column. Nullability is not compared: PostgreSQL does not describe it.
 */

const ROOT = resolve(__dirname, '..', '..');
export const SRC = join(ROOT, 'src');
const SQL_MODULE = join(SRC, 'database', 'sql.ts');

/** A type-checked program over src/ (spec files left out) and `extra` files held in memory (path → text). */
export function sourceProgram(extra: Record<string, string> = {}): ts.Program {
  const { config } = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  const options = { ...parsed.options, noEmit: true, incremental: false };
  const roots = parsed.fileNames.filter((file) => file.startsWith(`${SRC}/`) && !file.endsWith('.spec.ts'));
  const host = ts.createCompilerHost(options, true);
  const readSource = host.getSourceFile.bind(host);
  // A CompilerHost is TypeScript's documented extension point: its methods are meant to be replaced.
  /* eslint-disable no-restricted-syntax */
  host.getSourceFile = (fileName, version, onError, create) =>
    fileName in extra
      ? ts.createSourceFile(fileName, extra[fileName], version, true)
      : readSource(fileName, version, onError, create);
  host.fileExists = (fileName) => fileName in extra || ts.sys.fileExists(fileName);
  host.readFile = (fileName) => extra[fileName] ?? ts.sys.readFile(fileName);
  /* eslint-enable no-restricted-syntax */
  return ts.createProgram([...roots, ...Object.keys(extra)], options, host);
}

// ---------------------------------------------------------------------------------------------------------
// Call sites

type Helper = 'rows' | 'one' | 'bulkRows';

/** Where the statement is among each helper's arguments. */
const STATEMENT_ARGUMENT: Record<Helper, number> = { rows: 1, one: 1, bulkRows: 2 };

export interface CallSite {
  /** `src/<file> <enclosing declarations>` (` #n` for the n-th call in one declaration): stable across edits. */
  site: string;
  /** `src/<file>:<line>`, for messages. */
  location: string;
  call: ts.CallExpression;
  statement: ts.Expression;
  rowType: ts.Type;
}

interface SqlSymbols {
  helpers: Map<ts.Symbol, Helper>;
  prepared: ts.Symbol;
}

function sqlSymbols(checker: ts.TypeChecker, program: ts.Program): SqlSymbols {
  const file = program.getSourceFile(SQL_MODULE);
  const module = file && checker.getSymbolAtLocation(file);
  if (!module) throw new Error(`${SQL_MODULE} is not in the program`);
  const exports = new Map(checker.getExportsOfModule(module).map((symbol) => [symbol.name, symbol]));
  const helpers = new Map<ts.Symbol, Helper>();
  for (const name of ['rows', 'one', 'bulkRows'] as const) helpers.set(exports.get(name)!, name);
  return { helpers, prepared: exports.get('Prepared')! };
}

const resolveAlias = (checker: ts.TypeChecker, symbol: ts.Symbol | undefined): ts.Symbol | undefined =>
  symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;

/** The row type a call answers rows of; undefined when it is `unknown` (the caller reads no columns). */
function rowTypeOf(checker: ts.TypeChecker, call: ts.CallExpression, helper: Helper): ts.Type | undefined {
  let row: ts.Type;
  if (call.typeArguments?.length) row = checker.getTypeFromTypeNode(call.typeArguments[0]);
  else {
    const signature = checker.getResolvedSignature(call)!;
    const answer = checker.getAwaitedType(checker.getReturnTypeOfSignature(signature))!;
    if (answer.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) return undefined;
    // `one` answers Row | null, `rows` and `bulkRows` Row[].
    row =
      helper === 'one'
        ? checker.getNonNullableType(answer)
        : checker.getTypeArguments(answer as ts.TypeReference)[0];
  }
  return row.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any) ? undefined : row;
}

/** The names of the declarations around `node`, outermost first: `Class.method`, `function`, `CONSTANT`. */
function enclosingName(node: ts.Node): string {
  const names: string[] = [];
  for (let at = node.parent; !ts.isSourceFile(at); at = at.parent) {
    if (ts.isConstructorDeclaration(at)) names.unshift('constructor');
    else if (
      (ts.isClassDeclaration(at) ||
        ts.isFunctionDeclaration(at) ||
        ts.isMethodDeclaration(at) ||
        ts.isPropertyDeclaration(at) ||
        ts.isGetAccessorDeclaration(at) ||
        ts.isPropertyAssignment(at) ||
        // A function's own variables are left out: a call's name should not change with its local names.
        (ts.isVariableDeclaration(at) && ts.isSourceFile(at.parent.parent.parent))) &&
      at.name &&
      ts.isIdentifier(at.name)
    )
      names.unshift(at.name.text);
  }
  return names.length ? names.join('.') : '(top level)';
}

export const repositoryPath = (fileName: string): string => relative(ROOT, fileName).split(sep).join('/');

/** The calls of the helpers in `files` whose row type is not `unknown`, and how many calls have none. */
export function rowTypedCalls(
  program: ts.Program,
  files: readonly ts.SourceFile[],
): { sites: CallSite[]; untyped: number } {
  const checker = program.getTypeChecker();
  const { helpers } = sqlSymbols(checker, program);
  const sites: CallSite[] = [];
  const perName = new Map<string, number>();
  let untyped = 0;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const helper = helpers.get(resolveAlias(checker, checker.getSymbolAtLocation(node.expression))!);
      if (helper) {
        const rowType = rowTypeOf(checker, node, helper);
        if (!rowType) untyped++;
        else {
          const file = node.getSourceFile();
          const name = `${repositoryPath(file.fileName)} ${enclosingName(node)}`;
          const count = (perName.get(name) ?? 0) + 1;
          perName.set(name, count);
          const line = file.getLineAndCharacterOfPosition(node.getStart()).line + 1;
          sites.push({
            site: count === 1 ? name : `${name} #${count}`,
            location: `${repositoryPath(file.fileName)}:${line}`,
            call: node,
            statement: node.arguments[STATEMENT_ARGUMENT[helper]],
            rowType,
          });
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  files.forEach(visit);
  return { sites, untyped };
}

// ---------------------------------------------------------------------------------------------------------
// Statement texts

/** Why a statement's text cannot be found statically. */
export class Unresolved extends Error {}

/** A `new Prepared(name, text)`, evaluated. */
class PreparedText {
  constructor(readonly text: string) {}
}

/** Picks one of `options` alternatives (an unknown condition, a parameter of a few literal values). */
type Choose = (options: number) => number;

type Scope = Map<ts.Node, unknown>;

/** Globals a statement may use while it is built; they have no side effects. */
const PURE_GLOBALS: Record<string, unknown> = { String, Number, Boolean, Math, JSON, Object, Array };

/** At most this many texts per call site (each unknown condition doubles them). */
const MAX_VARIANTS = 16;

/** The binary operators statements are built with; `right` is evaluated only when JavaScript would. */
const OPERATORS = new Map<
  ts.SyntaxKind,
  (left: unknown, right: () => unknown, text: (value: unknown) => string) => unknown
>([
  [ts.SyntaxKind.AmpersandAmpersandToken, (left, right) => left && right()],
  [ts.SyntaxKind.BarBarToken, (left, right) => left || right()],
  [ts.SyntaxKind.QuestionQuestionToken, (left, right) => left ?? right()],
  [
    ts.SyntaxKind.PlusToken,
    (left, right, text) => {
      const added = right();
      return typeof left === 'number' && typeof added === 'number' ? left + added : text(left) + text(added);
    },
  ],
  [ts.SyntaxKind.MinusToken, (left, right) => (left as number) - (right() as number)],
  [ts.SyntaxKind.AsteriskToken, (left, right) => (left as number) * (right() as number)],
  [ts.SyntaxKind.EqualsEqualsEqualsToken, (left, right) => left === right()],
  [ts.SyntaxKind.ExclamationEqualsEqualsToken, (left, right) => left !== right()],
  [ts.SyntaxKind.LessThanToken, (left, right) => (left as number) < (right() as number)],
  [ts.SyntaxKind.GreaterThanToken, (left, right) => (left as number) > (right() as number)],
  [ts.SyntaxKind.InKeyword, (left, right) => (left as PropertyKey) in (right() as object)],
]);

/**
 * Evaluates the expressions that build a statement: literals, templates, `const`s, `new Prepared`, object and
 * array literals, and calls of functions of src/ by interpreting their bodies (expression bodies, and blocks
 * of `const`s, `if`s and a `return`). Methods of the values built (`join`, `map`, `replace`) run for real.
 * Where a value is unknown (a parameter, `this`), the expression's type decides: a few literal values are
 * each tried (`choose`), anything else makes the statement unresolved.
 */
class Interpreter {
  private readonly evaluating = new Set<ts.Node>();
  private readonly chosen = new Map<ts.Node, unknown>();

  constructor(
    private readonly checker: ts.TypeChecker,
    private readonly program: ts.Program,
    private readonly prepared: ts.Symbol,
    private readonly choose: Choose,
  ) {}

  evaluate(node: ts.Expression, scope: Scope): unknown {
    try {
      return this.evaluateNode(node, scope);
    } catch (error) {
      if (!(error instanceof Unresolved)) throw error;
      const values = this.literalValues(node);
      if (!values) throw error;
      // A name means one value throughout a text.
      const declaration = ts.isIdentifier(node) ? this.declarationOf(node) : undefined;
      if (!declaration) return values[this.choose(values.length)];
      if (!this.chosen.has(declaration)) this.chosen.set(declaration, values[this.choose(values.length)]);
      return this.chosen.get(declaration);
    }
  }

  /** The values of a type made of a few literals (`boolean`, `'a' | 'b'`, an enum), or undefined. */
  private literalValues(node: ts.Node): unknown[] | undefined {
    const type = this.checker.getTypeAtLocation(node);
    const parts = type.isUnion() ? type.types : [type];
    if (parts.length > 8) return undefined;
    const values: unknown[] = [];
    for (const part of parts) {
      if (part.isStringLiteral() || part.isNumberLiteral()) values.push(part.value);
      else if (part.flags & ts.TypeFlags.BooleanLiteral)
        values.push(this.checker.typeToString(part) === 'true');
      else if (part.flags & ts.TypeFlags.Undefined) values.push(undefined);
      else if (part.flags & ts.TypeFlags.Null) values.push(null);
      else return undefined;
    }
    return values;
  }

  private declarationOf(node: ts.Node): ts.Declaration | undefined {
    const symbol = resolveAlias(
      this.checker,
      ts.isShorthandPropertyAssignment(node)
        ? this.checker.getShorthandAssignmentValueSymbol(node)
        : this.checker.getSymbolAtLocation(node),
    );
    return symbol?.valueDeclaration ?? symbol?.declarations?.[0];
  }

  private evaluateNode(node: ts.Expression, scope: Scope): unknown {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    if (ts.isNumericLiteral(node)) return Number(node.text);
    if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
    if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
    if (node.kind === ts.SyntaxKind.NullKeyword) return null;
    if (ts.isRegularExpressionLiteral(node)) {
      const end = node.text.lastIndexOf('/');
      return new RegExp(node.text.slice(1, end), node.text.slice(end + 1));
    }
    if (ts.isTemplateExpression(node))
      return node.templateSpans.reduce(
        (text, span) => text + this.text(this.evaluate(span.expression, scope)) + span.literal.text,
        node.head.text,
      );
    if (
      ts.isParenthesizedExpression(node) ||
      ts.isAsExpression(node) ||
      ts.isNonNullExpression(node) ||
      ts.isSatisfiesExpression(node) ||
      ts.isTypeAssertionExpression(node)
    )
      return this.evaluate(node.expression, scope);
    if (ts.isConditionalExpression(node))
      return this.evaluate(this.condition(node.condition, scope) ? node.whenTrue : node.whenFalse, scope);
    if (ts.isBinaryExpression(node)) return this.binary(node, scope);
    if (ts.isPrefixUnaryExpression(node)) {
      const operand = this.evaluate(node.operand, scope);
      if (node.operator === ts.SyntaxKind.ExclamationToken) return !operand;
      if (node.operator === ts.SyntaxKind.MinusToken) return -(operand as number);
      throw new Unresolved(`the operator ${ts.tokenToString(node.operator)}`);
    }
    if (ts.isIdentifier(node)) return this.identifier(node, scope);
    if (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) {
      const constant = this.checker.getConstantValue(node);
      if (constant !== undefined) return constant;
      if (node.expression.kind === ts.SyntaxKind.ThisKeyword)
        throw new Unresolved(`\`${node.getText()}\`, a member of \`this\``);
      const target = this.evaluate(node.expression, scope);
      if (target == null) {
        if (node.questionDotToken) return undefined;
        throw new Unresolved(`\`${node.getText()}\` of ${String(target)}`);
      }
      const key = ts.isPropertyAccessExpression(node)
        ? node.name.text
        : (this.evaluate(node.argumentExpression, scope) as PropertyKey);
      return (target as Record<PropertyKey, unknown>)[key];
    }
    if (ts.isCallExpression(node)) return this.call(node, scope);
    if (ts.isNewExpression(node)) {
      const symbol = resolveAlias(this.checker, this.checker.getSymbolAtLocation(node.expression));
      if (symbol !== this.prepared || node.arguments?.length !== 2)
        throw new Unresolved(`\`new ${node.expression.getText()}\``);
      this.evaluate(node.arguments[0], scope);
      return new PreparedText(this.text(this.evaluate(node.arguments[1], scope)));
    }
    if (ts.isObjectLiteralExpression(node)) return this.object(node, scope);
    if (ts.isArrayLiteralExpression(node))
      return node.elements.flatMap((element) =>
        ts.isSpreadElement(element)
          ? [...(this.evaluate(element.expression, scope) as unknown[])]
          : [this.evaluate(element, scope)],
      );
    if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) return this.closure(node, scope);
    throw new Unresolved(`\`${node.getText()}\` (${ts.SyntaxKind[node.kind]})`);
  }

  /** A condition's truth; one that cannot be known is tried both ways. */
  private condition(node: ts.Expression, scope: Scope): boolean {
    try {
      return Boolean(this.evaluate(node, scope));
    } catch (error) {
      if (!(error instanceof Unresolved)) throw error;
      return this.choose(2) === 0;
    }
  }

  /** A value inside a template: what JavaScript would write, for a primitive. */
  private text(value: unknown): string {
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      throw new Unresolved('an object inside a template');
    if (typeof value === 'function') throw new Unresolved('a function inside a template');
    return String(value);
  }

  private binary(node: ts.BinaryExpression, scope: Scope): unknown {
    const operation = OPERATORS.get(node.operatorToken.kind);
    if (!operation) throw new Unresolved(`the operator ${ts.tokenToString(node.operatorToken.kind)}`);
    return operation(
      this.evaluate(node.left, scope),
      () => this.evaluate(node.right, scope),
      (value) => this.text(value),
    );
  }

  private identifier(node: ts.Identifier, scope: Scope): unknown {
    if (node.text === 'undefined') return undefined;
    const declaration = this.declarationOf(node);
    if (!declaration) throw new Unresolved(`\`${node.text}\`, which has no declaration`);
    if (scope.has(declaration)) return scope.get(declaration);
    const file = declaration.getSourceFile();
    if (this.program.isSourceFileDefaultLibrary(file) && node.text in PURE_GLOBALS)
      return PURE_GLOBALS[node.text];
    if (!file.fileName.startsWith(`${SRC}/`)) throw new Unresolved(`\`${node.text}\`, declared outside src/`);
    if (ts.isParameter(declaration)) throw new Unresolved(`\`${node.text}\`, a parameter`);
    if (ts.isBindingElement(declaration)) throw new Unresolved(`\`${node.text}\`, destructured`);
    if (ts.isFunctionDeclaration(declaration)) return this.closure(declaration, new Map());
    if (ts.isVariableDeclaration(declaration)) {
      if (!(ts.getCombinedNodeFlags(declaration) & ts.NodeFlags.Const) || !declaration.initializer)
        throw new Unresolved(`\`${node.text}\`, a variable`);
      if (this.evaluating.has(declaration)) throw new Unresolved(`\`${node.text}\`, defined by itself`);
      this.evaluating.add(declaration);
      let value: unknown;
      try {
        value = this.evaluate(declaration.initializer, new Map());
      } finally {
        this.evaluating.delete(declaration);
      }
      // A function that is not interpreted may change its own arrays and objects before it uses them.
      if (typeof value === 'object' && value !== null && !ts.isSourceFile(declaration.parent.parent.parent))
        throw new Unresolved(`\`${node.text}\`, a local ${Array.isArray(value) ? 'array' : 'object'}`);
      return value;
    }
    throw new Unresolved(`\`${node.text}\` (${ts.SyntaxKind[declaration.kind]})`);
  }

  private call(node: ts.CallExpression, scope: Scope): unknown {
    let receiver: unknown;
    let callee: unknown;
    if (
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.expression.kind !== ts.SyntaxKind.ThisKeyword
    ) {
      receiver = this.evaluate(node.expression.expression, scope);
      if (receiver == null && node.expression.questionDotToken) return undefined;
      callee = (receiver as Record<string, unknown>)[node.expression.name.text];
    } else callee = this.evaluate(node.expression, scope);
    if (typeof callee !== 'function')
      throw new Unresolved(`\`${node.expression.getText()}\`, not a function`);
    const args = node.arguments.flatMap((argument) =>
      ts.isSpreadElement(argument)
        ? [...(this.evaluate(argument.expression, scope) as unknown[])]
        : [this.evaluate(argument, scope)],
    );
    try {
      return (callee as (...values: unknown[]) => unknown).apply(receiver, args);
    } catch (error) {
      if (error instanceof Unresolved) throw error;
      throw new Unresolved(`\`${node.getText()}\` failed: ${(error as Error).message}`);
    }
  }

  private object(node: ts.ObjectLiteralExpression, scope: Scope): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    for (const property of node.properties) {
      if (ts.isSpreadAssignment(property))
        Object.assign(object, this.evaluate(property.expression, scope) as object);
      else if (ts.isShorthandPropertyAssignment(property)) {
        const declaration = this.declarationOf(property);
        object[property.name.text] =
          declaration && scope.has(declaration)
            ? scope.get(declaration)
            : this.evaluate(property.name, scope);
      } else if (
        property.name &&
        (ts.isIdentifier(property.name) || ts.isStringLiteral(property.name)) &&
        (ts.isPropertyAssignment(property) || ts.isMethodDeclaration(property))
      )
        object[property.name.text] = ts.isPropertyAssignment(property)
          ? this.evaluate(property.initializer, scope)
          : this.closure(property, scope);
      else throw new Unresolved(`the property \`${property.getText()}\``);
    }
    return object;
  }

  /** A function of the source as a JavaScript function that interprets its body when called. */
  private closure(declaration: ts.FunctionLikeDeclaration, scope: Scope): (...args: unknown[]) => unknown {
    return (...args: unknown[]) => {
      const inner: Scope = new Map(scope);
      declaration.parameters.forEach((parameter, index) => {
        const value =
          args[index] === undefined && parameter.initializer
            ? this.evaluate(parameter.initializer, inner)
            : args[index];
        if (ts.isIdentifier(parameter.name) && !parameter.dotDotDotToken) inner.set(parameter, value);
        else if (ts.isObjectBindingPattern(parameter.name))
          for (const element of parameter.name.elements) {
            const key = element.propertyName ?? element.name;
            if (!ts.isIdentifier(key) || !ts.isIdentifier(element.name) || element.dotDotDotToken)
              throw new Unresolved(`the parameter \`${parameter.getText()}\``);
            inner.set(element, (value as Record<string, unknown>)[key.text]);
          }
        else throw new Unresolved(`the parameter \`${parameter.getText()}\``);
      });
      if (!declaration.body) throw new Unresolved(`\`${declaration.getText()}\`, which has no body`);
      if (!ts.isBlock(declaration.body)) return this.evaluate(declaration.body, inner);
      return this.block(declaration.body.statements, inner).value;
    };
  }

  /** Runs `const` declarations, `if`s and `return`s. */
  private block(statements: readonly ts.Statement[], scope: Scope): { returned: boolean; value?: unknown } {
    for (const statement of statements) {
      if (ts.isVariableStatement(statement) && statement.declarationList.flags & ts.NodeFlags.Const) {
        for (const declaration of statement.declarationList.declarations) {
          if (!ts.isIdentifier(declaration.name) || !declaration.initializer)
            throw new Unresolved(`\`${declaration.getText()}\``);
          scope.set(declaration, this.evaluate(declaration.initializer, scope));
        }
      } else if (ts.isReturnStatement(statement))
        return { returned: true, value: statement.expression && this.evaluate(statement.expression, scope) };
      else if (ts.isIfStatement(statement)) {
        const branch = this.condition(statement.expression, scope)
          ? statement.thenStatement
          : statement.elseStatement;
        if (branch) {
          const outcome = this.block(ts.isBlock(branch) ? branch.statements : [branch], scope);
          if (outcome.returned) return outcome;
        }
      } else throw new Unresolved(`the statement \`${statement.getText().split('\n')[0]}\``);
    }
    return { returned: false };
  }
}

/**
 * Every text `statement` may have: the interpreter runs once per combination of the choices it meets (depth
 * first over the choice sequences). Throws `Unresolved` when it cannot tell.
 */
export function statementTexts(program: ts.Program, statement: ts.Expression): string[] {
  const checker = program.getTypeChecker();
  const { prepared } = sqlSymbols(checker, program);
  const texts = new Set<string>();
  const pending: number[][] = [[]];
  let runs = 0;
  while (pending.length) {
    const prefix = pending.pop()!;
    const taken: number[] = [];
    const choose: Choose = (options) => {
      const index = taken.length;
      if (index >= prefix.length)
        for (let other = options - 1; other > 0; other--) pending.push([...taken, other]);
      const choice = index < prefix.length ? prefix[index] : 0;
      taken.push(choice);
      return choice;
    };
    if (++runs > MAX_VARIANTS) throw new Unresolved(`more than ${MAX_VARIANTS} variants`);
    const value = new Interpreter(checker, program, prepared, choose).evaluate(statement, new Map());
    if (value instanceof PreparedText) texts.add(value.text);
    else if (typeof value === 'string') texts.add(value);
    else throw new Unresolved(`the statement is ${typeof value}, not text`);
  }
  return [...texts];
}

// ---------------------------------------------------------------------------------------------------------
// Result columns

export interface Column {
  name: string;
  typeId: number;
}

/**
 * Parse + Describe of an unnamed statement, then Sync, through pg's documented interface for custom queries
 * (`client.query(submittable)`, as pg-cursor uses it): PostgreSQL answers the result columns without running
 * anything (NoData for a statement that answers no rows).
 */
class StatementDescription implements Submittable {
  readonly columns: Promise<Column[]>;
  private fields: FieldDef[] = [];
  private settle!: { resolve: (columns: Column[]) => void; reject: (error: Error) => void };

  constructor(private readonly text: string) {
    this.columns = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }

  submit(connection: Connection): void {
    connection.parse({ name: '', text: this.text, types: [] }, true);
    connection.describe({ type: 'S', name: '' }, true);
    connection.sync();
  }

  // pg hands the active query the server's answers by these names.
  handleRowDescription(message: { fields: FieldDef[] }): void {
    this.fields = message.fields;
  }

  handleReadyForQuery(): void {
    this.settle.resolve(this.fields.map((field) => ({ name: field.name, typeId: field.dataTypeID })));
  }

  handleError(error: Error): void {
    this.settle.reject(error);
  }
}

/** The result columns of `text` as PostgreSQL describes them on `client`'s database; nothing runs. */
export function describeStatement(client: Client, text: string): Promise<Column[]> {
  return client.query(new StatementDescription(text)).columns;
}

// ---------------------------------------------------------------------------------------------------------
// Comparison

/** What pg makes of a column's text (src/ registers no type parsers of its own, so pg's defaults). */
type Parsed = 'string' | 'number' | 'boolean' | 'Date' | 'Buffer' | 'json' | 'object' | { array: Parsed };

const list = (element: Parsed): Parsed => ({ array: element });

/** The types pg parses by default (pg-types' text parsers); every other type stays the text. */
export const PARSED: Record<number, Parsed> = {
  20: 'string', // int8
  21: 'number', // int2
  23: 'number', // int4
  26: 'number', // oid
  700: 'number', // float4
  701: 'number', // float8
  16: 'boolean',
  1082: 'Date', // date
  1114: 'Date', // timestamp
  1184: 'Date', // timestamptz
  600: 'object', // point
  718: 'object', // circle
  1186: 'object', // interval
  17: 'Buffer', // bytea
  114: 'json',
  3802: 'json', // jsonb
  1000: list('boolean'),
  1001: list('Buffer'),
  1005: list('number'), // int2[]
  1007: list('number'), // int4[]
  1028: list('number'), // oid[]
  1016: list('string'), // int8[]
  1017: list('object'), // point[]
  1021: list('number'), // float4[]
  1022: list('number'), // float8[]
  1231: list('number'), // numeric[]
  1187: list('object'), // interval[]
  1115: list('Date'), // timestamp[]
  1182: list('Date'), // date[]
  1185: list('Date'), // timestamptz[]
  199: list('json'),
  3807: list('json'), // jsonb[]
  ...Object.fromEntries(
    // char[], regproc[], text[], varchar[], macaddr[], inet[], cidr[], uuid[], money[], time[], timetz[], numrange[]
    [1014, 1008, 1009, 1015, 1040, 1041, 651, 2951, 791, 1183, 1270, 3907].map((id) => [id, list('string')]),
  ),
};

const TEXT_TYPE = 25;

export function parsedAs(typeId: number): Parsed {
  // An array of an enum, for one, is not parsed: the row holds its text ('{A,B}').
  const parsedByPg = types.getTypeParser(typeId, 'text') !== types.getTypeParser(TEXT_TYPE, 'text');
  if (parsedByPg !== typeId in PARSED)
    throw new Error(
      `PARSED is wrong about the type ${typeId}: pg ${parsedByPg ? 'parses' : 'does not parse'} it`,
    );
  return PARSED[typeId] ?? 'string';
}

const describeParsed = (parsed: Parsed): string =>
  typeof parsed === 'string' ? parsed : `${describeParsed(parsed.array)}[]`;

/** Whether a value pg parses as `parsed` may be of `type` (some part of a union; null aside). */
function fits(checker: ts.TypeChecker, type: ts.Type, parsed: Parsed): boolean {
  if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown) || parsed === 'json') return true;
  const parts = (type.isUnion() ? type.types : [type]).filter(
    (part) => !(part.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)),
  );
  return parts.some((part) =>
    part.isIntersection()
      ? part.types.some((member) => fitsPart(checker, member, parsed))
      : fitsPart(checker, part, parsed),
  );
}

function fitsPart(checker: ts.TypeChecker, type: ts.Type, parsed: Parsed): boolean {
  if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return true;
  if (typeof parsed === 'object') {
    if (checker.isTupleType(type))
      return checker
        .getTypeArguments(type as ts.TypeReference)
        .every((member) => fits(checker, member, parsed.array));
    return (
      checker.isArrayType(type) &&
      fits(checker, checker.getTypeArguments(type as ts.TypeReference)[0], parsed.array)
    );
  }
  switch (parsed) {
    case 'string':
      return Boolean(type.flags & ts.TypeFlags.StringLike);
    case 'number':
      return Boolean(type.flags & ts.TypeFlags.NumberLike);
    case 'boolean':
      return Boolean(type.flags & ts.TypeFlags.BooleanLike);
    case 'Date':
      return type.getSymbol()?.name === 'Date';
    case 'Buffer':
      return ['Buffer', 'Uint8Array'].includes(type.getSymbol()?.name ?? '');
    case 'json':
      return true;
    case 'object':
      return (
        Boolean(type.flags & (ts.TypeFlags.Object | ts.TypeFlags.NonPrimitive)) && !checker.isArrayType(type)
      );
  }
}

/** The differences between a row type and the columns of its statement. */
export function compareRow(
  checker: ts.TypeChecker,
  rowType: ts.Type,
  columns: Column[],
  typeNames: Map<number, string>,
): string[] {
  const problems: string[] = [];
  const properties = new Map(
    checker
      .getPropertiesOfType(rowType)
      .filter((property) => !(property.flags & ts.SymbolFlags.Method))
      .map((property) => [property.name, property]),
  );
  const seen = new Set<string>();
  for (const { name, typeId } of columns) {
    const typeName = typeNames.get(typeId) ?? `type ${typeId}`;
    if (seen.has(name)) problems.push(`the column ${name} comes twice`);
    seen.add(name);
    const property = properties.get(name);
    if (!property) {
      problems.push(`the column ${name} (${typeName}) is no property of the row type`);
      continue;
    }
    const type = checker.getTypeOfSymbol(property);
    const parsed = parsedAs(typeId);
    if (!fits(checker, type, parsed))
      problems.push(
        `${name} is ${checker.typeToString(type)} in the row type, but ${typeName} in PostgreSQL, which pg reads as ${describeParsed(parsed)}`,
      );
  }
  for (const name of properties.keys())
    if (!seen.has(name)) problems.push(`the property ${name} is no column of the statement`);
  return problems;
}

// ---------------------------------------------------------------------------------------------------------
// The check

export interface RowTypeReport {
  /** Call sites with a row type whose statements were described and compared. */
  checked: number;
  /** Texts described (a site may have several variants). */
  statements: number;
  /** Call sites whose statement could not be found statically: site → why. */
  unresolved: Record<string, string>;
  /** `<location> <site>: <problem>`. */
  problems: string[];
  /** Calls whose rows are not read (row type `unknown`). */
  untyped: number;
}

/** Checks every row-typed call of `files` against the database of `client`. */
export async function checkRowTypes(
  program: ts.Program,
  files: readonly ts.SourceFile[],
  client: Client,
): Promise<RowTypeReport> {
  const checker = program.getTypeChecker();
  const { sites, untyped } = rowTypedCalls(program, files);
  const report: RowTypeReport = { checked: 0, statements: 0, unresolved: {}, problems: [], untyped };
  const described = new Map<string, Column[] | Error>();
  for (const site of sites) {
    let texts: string[];
    try {
      texts = statementTexts(program, site.statement);
    } catch (error) {
      if (!(error instanceof Unresolved)) throw error;
      report.unresolved[site.site] = error.message;
      continue;
    }
    report.checked++;
    const problems = new Set<string>();
    for (const text of texts) {
      if (!described.has(text))
        described.set(text, await describeStatement(client, text).catch((error: Error) => error));
      const columns = described.get(text)!;
      if (columns instanceof Error) problems.add(`PostgreSQL refuses the statement: ${columns.message}`);
      else
        compareRow(checker, site.rowType, columns, await typeNames(client, columns)).forEach((problem) =>
          problems.add(problem),
        );
    }
    report.problems.push(...[...problems].map((problem) => `${site.location} ${site.site}: ${problem}`));
  }
  report.statements = described.size;
  return report;
}

const namesOfTypes = new WeakMap<Client, Map<number, string>>();

/** PostgreSQL's names of the columns' types, for the messages. */
async function typeNames(client: Client, columns: Column[]): Promise<Map<number, string>> {
  const names = namesOfTypes.get(client) ?? new Map<number, string>();
  namesOfTypes.set(client, names);
  const missing = columns.map((column) => column.typeId).filter((id) => !names.has(id));
  if (missing.length) {
    const found = await client.query<{ id: number; name: string }>(
      `SELECT oid::int AS id, format_type(oid, NULL) AS name FROM pg_type WHERE oid = ANY($1::oid[])`,
      [missing],
    );
    for (const { id, name } of found.rows) names.set(id, name);
  }
  return names;
}
