// The app's words come from the API's own message catalogue (keys ui.*), served by
// the handler at /ui/messages/{lang}.json. pt-PT is the default.

export const languages = ["pt-PT", "en", "es"] as const;
export type Lang = (typeof languages)[number];

let messages: Record<string, string> = {};
let current: Lang = "pt-PT";

export function lang(): Lang {
  return current;
}

export async function load(prefix: string, want: string | null): Promise<void> {
  const l = (languages as readonly string[]).includes(want || "") ? (want as Lang) : "pt-PT";
  const res = await fetch(prefix + l + ".json", { credentials: "omit" });
  if (!res.ok) throw new Error("messages " + res.status);
  messages = await res.json();
  current = l;
  document.documentElement.lang = l;
}

// t returns the message of key with {name} placeholders filled in; an unknown key
// shows itself, so a missing word is visible.
export function t(key: string, params?: Record<string, string | number>): string {
  let s = messages["ui." + key];
  if (s === undefined) return "ui." + key;
  if (params) {
    for (const [k, v] of Object.entries(params)) s = s.split("{" + k + "}").join(String(v));
  }
  return s;
}
