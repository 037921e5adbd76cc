// What the page shows of an error the library (or the model worker) threw: its sentence.
// The kind (RangeError, TypeError, ...) is for programs that catch it; a person reads the message,
// which names the function and the problem ("attnlens.explainSentence: text must have ...").
export function errorText(error) {
  return typeof error?.message === 'string' && error.message !== '' ? error.message : String(error);
}
