/** The JSON requests of the benches' setup (realms, tokens, areas). */

/** The one JSON request of the benches' setup: anything but a 200 throws, naming the request. */
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

/** Makes `realm` (with the admin token) and its `areas` (with the realm's write token); returns that token. */
export async function benchRealm(httpUrl: string, adminToken: string, realm: string, areas: readonly { id: string; shape: unknown }[] = []): Promise<string> {
  await benchRequest(httpUrl, adminToken, 'PUT', `/admin/v1/realm/${realm}`, {});
  const { token } = (await benchRequest(httpUrl, adminToken, 'POST', `/admin/v1/realm/${realm}/token`, { scope: 'write' })) as { token: string };
  for (const area of areas) await benchRequest(httpUrl, token, 'POST', `/v2/realm/${realm}/area/${area.id}`, { label: area.id, shape: area.shape });
  return token;
}
