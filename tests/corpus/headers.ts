// headers.ts - parse mail-style headers and CSS-ish selectors for the preview pane
import { decodeBase64 } from "./encoding";

export interface Address {
  name: string;
  email: string;
  comment?: string;
}

const TOKEN_SPLIT = /\s*[,;]\s*/;

/**
 * Split `Jane Doe <jane@example.org> (work)` into its parts.
 */
export function parseAddress(header: string): Address {
  const [display, rest = ""] = header.split("<", 2);
  const [email, comment = ""] = rest.split(/>\s*\(/);
  return {
    name: display.replace(/"/g, "").trim(),
    email: email.replace(/>$/, "").trim(),
    comment: comment ? comment.replace(/\)\s*$/, "") : undefined,
  };
}

/** Drop default values from a parameter list like `a, b = f(1, 2), c`. */
export function bareParams(list: string): string[] {
  return list.split(TOKEN_SPLIT).map((param) => param.replace(/=[^,)]*$/, "").trim());
}

export function unpadBase64(token: string): string {
  // padding is optional in base64url, and some senders add too much of it
  return token.replace(/=+$/, "");
}

export function isCloser(token: string): boolean {
  const bare = token.trim();
  return (
    bare.length === 1 &&
    // a closing bracket on its own, as in "]" or ")"
    /^[)\]}]$/.test(bare)
  );
}

export function childSelectors(selector: string): string[] {
  const parts: string[] = [];
  for (const part of selector.split(/>(?![^[]*\])/)) {
    if (part.trim()) {
      parts.push(part.trim());
    }
  }
  return parts;
}

export function scaleToFit(width: number, height: number, box: number): [number, number] {
  let ratio = Math.max(width, height) / box;
  if (ratio > 1) {
    width /= ratio;
    height /= ratio;
  }
  ratio = width / height;
  return [Math.round(width), Math.round(width / ratio)];
}

export function decodeSubject(raw: string): string {
  const match = /^=\?([^?]+)\?B\?([^?]*)\?=$/i.exec(raw.trim());
  if (!match) {
    return raw;
  }
  const [, charset, payload] = match;
  return decodeBase64(unpadBase64(payload), charset.toLowerCase());
}
