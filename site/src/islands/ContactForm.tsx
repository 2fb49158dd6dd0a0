// Contact form (rules and texts: lib/validation.ts, docs/API.md): POST /api/contact {name, email, subject, message}.
import { useState, type FormEvent } from 'react';
import { postJson } from '../lib/api.ts';
import { toast } from '../lib/toast.ts';
import { validateContact, type ContactInput, type Errors } from '../lib/validation.ts';

const EMPTY: ContactInput = { name: '', email: '', subject: '', message: '' };

export default function ContactForm() {
  const [values, setValues] = useState<ContactInput>(EMPTY);
  const [errors, setErrors] = useState<Errors<ContactInput>>({});
  const [submitted, setSubmitted] = useState(false);
  const [sending, setSending] = useState(false);

  const set = (field: keyof ContactInput) => (e: { target: { value: string } }) => {
    const next = { ...values, [field]: e.target.value };
    setValues(next);
    if (submitted) setErrors(validateContact(next));
  };

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    setSubmitted(true);
    const found = validateContact(values);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    setSending(true);
    try {
      await postJson('/api/contact', {
        name: values.name.trim(),
        email: values.email.trim(),
        subject: values.subject,
        message: values.message.trim(),
      });
      toast({ title: 'Message sent successfully!', description: "We'll get back to you as soon as possible." });
      setValues(EMPTY);
      setSubmitted(false);
      setErrors({});
    } catch (err) {
      console.error('contact', err);
      toast({
        title: 'Failed to send message',
        description: 'There was an error sending your message. Please try again.',
        variant: 'destructive',
      });
    } finally {
      setSending(false);
    }
  };

  const describedBy = (f: keyof ContactInput) => (errors[f] ? `contact-${f}-error` : undefined);
  const error = (f: keyof ContactInput) =>
    errors[f] && (
      <p id={`contact-${f}-error`} className="field-error">
        {errors[f]}
      </p>
    );

  return (
    <form onSubmit={onSubmit} noValidate className="space-y-4" aria-label="Contact form">
      <div className="grid gap-4 sm:grid-cols-2">
        <div>
          <label htmlFor="contact-name" className="label">
            Name
          </label>
          <input
            id="contact-name"
            className="input"
            value={values.name}
            onChange={set('name')}
            autoComplete="name"
            aria-invalid={!!errors.name}
            aria-describedby={describedBy('name')}
          />
          {error('name')}
        </div>
        <div>
          <label htmlFor="contact-email" className="label">
            Email
          </label>
          <input
            id="contact-email"
            type="email"
            className="input"
            value={values.email}
            onChange={set('email')}
            autoComplete="email"
            aria-invalid={!!errors.email}
            aria-describedby={describedBy('email')}
          />
          {error('email')}
        </div>
      </div>
      <div>
        <label htmlFor="contact-subject" className="label">
          Subject
        </label>
        <select
          id="contact-subject"
          className="input"
          value={values.subject}
          onChange={set('subject')}
          aria-invalid={!!errors.subject}
          aria-describedby={describedBy('subject')}
        >
          <option value="">Select a subject</option>
          <option value="general">General inquiry</option>
          <option value="enterprise">Enterprise sales</option>
          <option value="support">Technical support</option>
          <option value="billing">Billing</option>
        </select>
        {error('subject')}
      </div>
      <div>
        <label htmlFor="contact-message" className="label">
          Message
        </label>
        <textarea
          id="contact-message"
          className="input min-h-36"
          value={values.message}
          onChange={set('message')}
          aria-invalid={!!errors.message}
          aria-describedby={describedBy('message')}
        />
        {error('message')}
      </div>
      <button type="submit" className="btn-primary w-full sm:w-auto" disabled={sending}>
        {sending ? 'Sending...' : 'Send Message'}
      </button>
    </form>
  );
}
