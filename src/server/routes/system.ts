/** The system endpoints (spec/api.md §7): health, version and Prometheus metrics. */
import { HealthResponse, VersionResponse } from '../../api/schemas.js';
import type { Route } from '../route.js';

export const healthRoute: Route = {
  method: 'get',
  path: '/api/health',
  operationId: 'health',
  tag: 'System',
  summary: '`ok` while serving; 503 with `starting` or `stopping` otherwise',
  access: 'public',
  response: { status: 200, schema: HealthResponse, description: 'Serving' },
  errors: [],
  async handle(_request, _caller, context) {
    const status = context.status();
    return { status: status === 'ok' ? 200 : 503, body: { status } };
  },
};

export const versionRoute: Route = {
  method: 'get',
  path: '/api/version',
  operationId: 'version',
  tag: 'System',
  summary: 'The running version',
  access: 'public',
  response: { status: 200, schema: VersionResponse, description: 'The version' },
  errors: [],
  async handle(_request, _caller, context) {
    return { status: 200, body: { version: context.version } };
  },
};

export const metricsRoute: Route = {
  method: 'get',
  path: '/metrics',
  operationId: 'metrics',
  tag: 'System',
  summary:
    'Prometheus metrics: requests and latency per route, search latency, queue depth, shards loaded, index lag (of the repositories the caller can see), worker crashes, shard failures',
  access: 'read',
  response: { status: 200, contentType: 'text/plain; version=0.0.4', description: 'Prometheus text format' },
  errors: ['NOT_AUTHENTICATED'],
  async handle(_request, caller, context) {
    const visible = new Set(context.config.repos.filter((repo) => caller.canSee(repo)).map((repo) => repo.name));
    return { status: 200, text: await context.metrics.text((name) => visible.has(name)), contentType: context.metrics.registry.contentType };
  },
};
