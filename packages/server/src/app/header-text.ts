import type { ServerContext } from './server-deps.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
// eslint-disable-next-line no-control-regex -- all of ASCII, from NUL on purpose
const ascii = /^[\x00-\x7f]*$/;

/**
 * A request header's value as text. Node's HTTP parser hands header bytes over as Latin-1 (one char per
 * byte), so a UTF-8 id such as `café` sent by curl would arrive as `cafÃ©`, while a fetch() client,
 * which sends `é` as its one Latin-1 byte, arrives as `café`. Bytes that form valid UTF-8 are read as
 * UTF-8, any others stay Latin-1: both clients then name the same user, and a header names the same id
 * as a JSON body or a query parameter does. (A Latin-1 value that happens to be valid UTF-8, such as
 * `Ã©` meant literally, is read as UTF-8; ids written so are not expected.)
 */
export function headerText(c: ServerContext, name: string): string | undefined {
  const value = c.req.header(name);
  if (value === undefined || ascii.test(value)) return value;
  const bytes = Buffer.from(value, 'latin1');
  try {
    return utf8.decode(bytes);
  } catch {
    return value;
  }
}
