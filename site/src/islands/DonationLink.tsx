// The /beta-api page's donation link ("a donation link to a card payment provider"). The site
// is built once for every deployment, so the address is the server's DONATION_URL, read at run time from
// GET /api/site-config: a "Donate by card" link when it is set, nothing at all when it is not (or when the
// setting cannot be read).
import { useEffect, useState } from 'react';
import { getJson } from '../lib/api.ts';

export default function DonationLink() {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    getJson<{ donationUrl: string | null }>('/api/site-config').then(
      (config) =>
        setUrl(
          typeof config.donationUrl === 'string' && /^https?:\/\//.test(config.donationUrl) ? config.donationUrl : null,
        ),
      () => setUrl(null),
    );
  }, []);
  if (url === null) return null;
  return (
    <a className="btn-primary" href={url} rel="noopener" data-testid="donation-link">
      Donate by card
    </a>
  );
}
