/**
 * A form field's error, under the field and announced as it appears (the field points at it with
 * aria-describedby through `id`); nothing while there is none.
 */
export function FieldError({ id, text }: { id?: string; text: string | null | undefined }) {
  if (!text) return null;
  return (
    <p className="field-error" id={id} role="alert">
      {text}
    </p>
  );
}
