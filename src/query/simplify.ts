/**
 * Rewrites a query tree into an equivalent, smaller one: nested and/or of the
 * same kind are flattened, one-operand and/or unwrapped, double negations
 * removed, and constant operands folded (an empty `or` is false, an empty
 * `and` is true).
 */
import { MATCH_NOTHING, type QueryNode } from './ast.js';

const MATCH_EVERYTHING: QueryNode = { type: 'and', operands: [] };

export function simplify(node: QueryNode): QueryNode {
  switch (node.type) {
    case 'not': {
      const operand = simplify(node.operand);
      return operand.type === 'not' ? operand.operand : { type: 'not', operand };
    }
    case 'and':
    case 'or': {
      const operands: QueryNode[] = [];
      for (const child of node.operands.map(simplify)) {
        if (child.type === node.type) operands.push(...child.operands);
        else operands.push(child);
      }
      // false absorbs an and, true absorbs an or; the other constant is neutral.
      const absorbing = node.type === 'and' ? isNothing : isEverything;
      const neutral = node.type === 'and' ? isEverything : isNothing;
      if (operands.some(absorbing)) return node.type === 'and' ? MATCH_NOTHING : MATCH_EVERYTHING;
      const kept = operands.filter((operand) => !neutral(operand));
      return kept.length === 1 ? kept[0]! : { type: node.type, operands: kept };
    }
    default:
      return node;
  }
}

function isNothing(node: QueryNode): boolean {
  return node.type === 'or' && node.operands.length === 0;
}

function isEverything(node: QueryNode): boolean {
  return node.type === 'and' && node.operands.length === 0;
}
