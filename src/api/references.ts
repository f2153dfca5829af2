/** The schemas others refer to by $id: what request validation resolves references against, and the OpenAPI document's components. */
import type { TSchema } from '@sinclair/typebox';
import { PlannedQuery } from './cluster-schemas.js';
import { Commit } from './git-schemas.js';
import { Position, Range, Repository, SearchStats, TreeNode } from './schemas.js';

export const SHARED_SCHEMAS: TSchema[] = [Position, Range, SearchStats, TreeNode, Repository, Commit, PlannedQuery];
