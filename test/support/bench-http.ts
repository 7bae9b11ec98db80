/** The one JSON request of the benches' setup (realms, tokens, areas): anything but a 200 throws, naming the request. */
export async function benchRequest(httpUrl: string, token: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(httpUrl + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json: unknown = await res.json();
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}
