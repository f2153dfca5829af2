/** The one form of `DELETE {base}/{id}` routes (API keys, scoped tokens, sessions): the id from the path, removed for the caller, audited, 204. */
import type { ApiError } from '../../api/errors.js';
import type { AuditAction } from '../../auth/audit-actions.js';
import { audit, type Caller } from '../access.js';
import { decodePathSegment, type Request } from '../http.js';
import type { Route, ServerContext } from '../route.js';

export interface DeleteByIdSpec extends Pick<Route, 'operationId' | 'tag' | 'summary' | 'access' | 'ee' | 'errors'> {
  base: string;
  /** Removes the caller's thing `id`; false when there is none the caller may remove. */
  remove(caller: Caller, context: ServerContext, id: string): Promise<boolean>;
  /** The error for an id that names nothing (`shown` is the id as sent, quoted). */
  notFound(shown: string): ApiError;
  audited: { action: AuditAction; targetType: string };
}

export function deleteByIdRoute(spec: DeleteByIdSpec): Route {
  const { base, remove, notFound, audited, ...operation } = spec;
  return {
    ...operation,
    method: 'delete',
    path: `${base}/{id}`,
    response: { status: 204, description: 'Done' },
    async handle(request: Request, caller: Caller, context: ServerContext) {
      const raw = request.path.slice(base.length + 1);
      const id = decodePathSegment(raw);
      if (id === null || !(await remove(caller, context, id))) throw notFound(JSON.stringify(id ?? raw));
      audit(context, caller, audited.action, { id, type: audited.targetType });
      return { status: 204, text: '', contentType: 'text/plain' };
    },
  };
}
