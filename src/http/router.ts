import type { Method, Route } from '../routes/route.ts';

interface Node {
  statics: Map<string, Node>;
  param: { name: string; node: Node } | null;
  routes: Map<string, Route>;
}

const NO_PATH_PARAMS: ReadonlyMap<string, string> = new Map();

const newNode = (): Node => ({ statics: new Map(), param: null, routes: new Map() });

export type Match =
  | { kind: 'found'; route: Route; pathParams: ReadonlyMap<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

/** A path trie over the route table: static segments win over parameters, as in /users/me vs /users/{id}. */
export class Router {
  private readonly root = newNode();
  /**
   * The nodes of paths without parameters, by the path as a request spells it when it spells it plainly
   * (`/events`): found without splitting the path. The trie finds the same node (its static segments are
   * tried first all the way down), and it finds every other spelling.
   */
  private readonly exact = new Map<string, Node>();

  constructor(routes: readonly Route[]) {
    for (const route of routes) this.add(route);
  }

  private add(route: Route): void {
    let node = this.root;
    for (const segment of split(route.path)) {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (param) {
        node.param ??= { name: param[1]!, node: newNode() };
        if (node.param.name !== param[1]) throw new Error(`route ${route.path}: parameter name differs from a sibling's`);
        node = node.param.node;
      } else {
        let next = node.statics.get(segment);
        if (!next) node.statics.set(segment, (next = newNode()));
        node = next;
      }
    }
    if (node.routes.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    node.routes.set(route.method, route);
    if (!route.path.includes('{')) this.exact.set(`/${split(route.path).join('/')}`, node);
  }

  match(method: Method | string, path: string): Match {
    // A path without parameters shares one empty map: GET /events comes thousands of times in a fan-out.
    let pathParams: ReadonlyMap<string, string> = NO_PATH_PARAMS;
    let node = this.exact.get(path) ?? null;
    if (node === null) {
      const params = new Map<string, string>();
      node = find(this.root, split(path), 0, params);
      pathParams = params;
    }
    if (!node || node.routes.size === 0) return { kind: 'not-found' };
    const route = node.routes.get(method) ?? (method === 'HEAD' ? node.routes.get('GET') : undefined);
    if (!route) return { kind: 'method-not-allowed', allowed: [...node.routes.keys()] };
    return { kind: 'found', route, pathParams };
  }
}

function find(node: Node, segments: string[], index: number, params: Map<string, string>): Node | null {
  if (index === segments.length) return node;
  const segment = segments[index]!;
  const byName = node.statics.get(segment);
  if (byName) {
    const found = find(byName, segments, index + 1, params);
    if (found && found.routes.size > 0) return found;
  }
  if (node.param) {
    let value: string;
    try {
      value = decodeURIComponent(segment);
    } catch {
      return null;
    }
    const found = find(node.param.node, segments, index + 1, params);
    if (found && found.routes.size > 0) {
      params.set(node.param.name, value);
      return found;
    }
  }
  return null;
}

const split = (path: string) => path.split('/').filter((segment) => segment.length > 0);
