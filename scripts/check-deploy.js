#!/usr/bin/env node
/*
 * Checks the deployment files (docs/operations.md "Deployment files"), offline, as CI runs it
 * (`npm run deploy:check`):
 * - compose.yaml: `docker-compose config` validates it against the Compose file schema and resolves it
 *   (Debian's docker-compose, which needs no daemon for this; Debian's podman-compose has no `config`), and it
 *   holds what the documentation promises (two instances behind PgBouncer in transaction mode, Prometheus
 *   scraping both);
 * - deploy/k8s/*.yaml: each object against the Kubernetes OpenAPI schema of its kind (kubernetes-models: types,
 *   required fields, enums), and the Deployment's promises (probes, non-root, read-only root, writable paths,
 *   resources, the migration before the service);
 * - deploy/prometheus: `promtool check rules` and the rule tests of alerts.test.yml (Debian's prometheus).
 * Exits 1 with every failure listed.
 */
const { execFileSync } = require('node:child_process');
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const YAML = require('yaml');

const ROOT = join(__dirname, '..');
const failures = [];
const check = (condition, message) => {
  if (!condition) failures.push(message);
};

function run(command, args) {
  try {
    return execFileSync(command, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    failures.push(
      `${command} ${args.join(' ')} failed:\n${error.stdout ?? ''}${error.stderr ?? error.message}`,
    );
    return null;
  }
}

function checkCompose() {
  const resolved = run('docker-compose', ['-f', 'compose.yaml', 'config']);
  if (resolved === null) return;
  const { services } = YAML.parse(resolved);
  const apps = Object.entries(services).filter(([, service]) => service.build);
  check(apps.length === 2, `compose.yaml: two instances of the service, found ${apps.length}`);
  for (const [name, { environment = {} }] of apps) {
    check(environment.DATABASE_POOLER === 'transaction', `compose.yaml ${name}: DATABASE_POOLER=transaction`);
    check(
      /@pgbouncer:/.test(environment.DATABASE_URL ?? ''),
      `compose.yaml ${name}: DATABASE_URL through pgbouncer`,
    );
    check(
      /@db:/.test(environment.DATABASE_DIRECT_URL ?? ''),
      `compose.yaml ${name}: DATABASE_DIRECT_URL to db`,
    );
    check(environment.METRICS_PORT === '9464', `compose.yaml ${name}: METRICS_PORT=9464`);
  }
  const pgbouncer = readFileSync(join(ROOT, 'deploy', 'pgbouncer', 'pgbouncer.ini'), 'utf8');
  check(/^pool_mode = transaction$/m.test(pgbouncer), 'pgbouncer.ini: pool_mode = transaction');
  const prometheus = YAML.parse(readFileSync(join(ROOT, 'deploy', 'prometheus', 'prometheus.yml'), 'utf8'));
  const targets = prometheus.scrape_configs.flatMap((job) => job.static_configs.flatMap((c) => c.targets));
  for (const [name] of apps) check(targets.includes(`${name}:9464`), `prometheus.yml: scrapes ${name}:9464`);
}

/** The kubernetes-models module of an object's apiVersion and kind (`apps/v1` → `apps/v1/Deployment`). */
async function modelOf({ apiVersion, kind }) {
  const module = await import(`kubernetes-models/${apiVersion}/${kind}`);
  return module[kind];
}

async function checkKubernetes() {
  const directory = join(ROOT, 'deploy', 'k8s');
  const objects = [];
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.yaml'))) {
    for (const document of YAML.parseAllDocuments(readFileSync(join(directory, file), 'utf8'))) {
      if (document.errors.length > 0) failures.push(`${file}: ${document.errors.join('; ')}`);
      const object = document.toJS();
      objects.push(object);
      try {
        const Model = await modelOf(object);
        new Model(object).validate();
      } catch (error) {
        failures.push(`${file} ${object.kind} ${object.metadata?.name}: ${error.message}`);
      }
    }
  }
  const kinds = new Set(objects.map((object) => object.kind));
  for (const kind of ['Deployment', 'Service', 'PodDisruptionBudget', 'ConfigMap', 'Secret']) {
    check(kinds.has(kind), `deploy/k8s: a ${kind}`);
  }
  const deployment = objects.find((object) => object.kind === 'Deployment');
  if (!deployment) return;
  const pod = deployment.spec.template.spec;
  check(pod.securityContext?.runAsNonRoot === true, 'Deployment: runAsNonRoot');
  const [migrate] = pod.initContainers ?? [];
  check(
    migrate?.command?.includes('database:migrate'),
    'Deployment: the migration in the first init container',
  );
  for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
    const where = `Deployment container ${container.name}`;
    check(container.securityContext?.readOnlyRootFilesystem === true, `${where}: readOnlyRootFilesystem`);
    check(container.securityContext?.allowPrivilegeEscalation === false, `${where}: no privilege escalation`);
    check(container.resources?.requests?.cpu && container.resources?.requests?.memory, `${where}: requests`);
    const mounted = (container.volumeMounts ?? []).map((mount) => mount.mountPath);
    for (const path of ['/data', '/tmp']) check(mounted.includes(path), `${where}: ${path} writable`);
  }
  const [service] = pod.containers;
  check(service.startupProbe?.httpGet?.path === '/health/live', 'Deployment: startup probe on /health/live');
  check(
    service.livenessProbe?.httpGet?.path === '/health/live',
    'Deployment: liveness probe on /health/live',
  );
  check(service.readinessProbe?.httpGet?.path === '/health', 'Deployment: readiness probe on /health');
  check(
    service.env?.some((variable) => variable.name === 'MIGRATIONS_RUN' && variable.value === 'false'),
    'Deployment: the service starts with MIGRATIONS_RUN=false (the init container migrated)',
  );
}

function checkAlerts() {
  run('promtool', ['check', 'rules', 'deploy/prometheus/alerts.yml']);
  run('promtool', ['test', 'rules', 'deploy/prometheus/alerts.test.yml']);
  run('promtool', ['check', 'config', '--syntax-only', 'deploy/prometheus/prometheus.yml']);
}

async function main() {
  checkCompose();
  await checkKubernetes();
  checkAlerts();
  if (failures.length > 0) {
    console.error(`Deployment files: ${failures.length} problem(s)\n- ${failures.join('\n- ')}`);
    process.exit(1);
  }
  console.log('Deployment files: compose.yaml, deploy/k8s, deploy/prometheus are valid');
}

void main();
