/** @module no_provider_leak: no provider or model name in any byte of any response (headers and body). */
import type { CheckFn } from './types.ts';

/** Provider, model family and provider-format markers; the service speaks only of aliases. */
export const DEFAULT_PROVIDER_NAMES =
  /openai|anthropic|claude|chatgpt|\bgpt-?[0-9o]|gemini|\bmistral|mixtral|\bllama|ollama|\bvllm\b|\bcohere\b|deepseek|\bqwen|\bgroq\b|bedrock|vertex ?ai|hugging ?face|chatcmpl-|\bphi-[0-9]|\bgemma\b/i;

export const noProviderLeak: CheckFn = ({ response, config }) => {
  const re = new RegExp(config.providerNames.source, config.providerNames.flags.replace('g', ''));
  for (const [name, value] of Object.entries(response.headers)) {
    const m = re.exec(`${name}: ${value}`);
    if (m) return `Provider or model name "${m[0]}" in response header ${name}`;
  }
  const m = re.exec(response.text);
  if (m) {
    const at = m.index;
    return `Provider or model name "${m[0]}" in response body: …${response.text.slice(Math.max(0, at - 40), at + 40)}…`;
  }
  return undefined;
};
