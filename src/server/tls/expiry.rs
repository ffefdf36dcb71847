//! When the serving certificate expires: the `notAfter` of the leaf, read from its DER with
//! just enough of X.509's structure (RFC 5280 4.1: `Certificate`, `TBSCertificate`,
//! `Validity`), and the gauge that exports it, `warrant_tls_serving_certificate_expiry_timestamp_seconds`,
//! which the chart's WarrantCertificateExpiring alert watches. The gauge follows every reload.

use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The serving certificate's expiry, as a gauge of Unix seconds (0 until a certificate is read).
#[derive(Debug, Clone, Default)]
pub struct CertificateExpiry {
    not_after: Gauge,
}

impl CertificateExpiry {
    /// Registers the gauge in `registry`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "warrant_tls_serving_certificate_expiry_timestamp_seconds",
            "Unix time at which the serving certificate being presented expires (its notAfter)",
            self.not_after.clone(),
        );
    }

    /// Records the leaf certificate now presented (a DER the parser cannot read leaves the
    /// previous value).
    pub fn observe(&self, leaf_der: &[u8]) {
        if let Some(t) = not_after(leaf_der) {
            self.not_after.set(t);
        }
    }

    /// The recorded expiry (Unix seconds).
    #[cfg(test)]
    pub fn get(&self) -> i64 {
        self.not_after.get()
    }
}

/// One DER TLV: its tag, its contents and what follows it.
fn tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

const SEQUENCE: u8 = 0x30;
const VERSION: u8 = 0xa0; // [0] EXPLICIT
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;

/// The certificate's `notAfter` in Unix seconds.
pub(crate) fn not_after(der: &[u8]) -> Option<i64> {
    let (tag, certificate, _) = tlv(der)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, mut tbs, _) = tlv(certificate)?;
    if tag != SEQUENCE {
        return None;
    }
    if tbs.first() == Some(&VERSION) {
        tbs = tlv(tbs)?.2;
    }
    // serialNumber, signature, issuer.
    for _ in 0..3 {
        tbs = tlv(tbs)?.2;
    }
    let (tag, validity, _) = tlv(tbs)?;
    if tag != SEQUENCE {
        return None;
    }
    let (_, _, after) = tlv(validity)?;
    let (tag, time, _) = tlv(after)?;
    let text = std::str::from_utf8(time).ok()?.strip_suffix('Z')?;
    let (year, rest) = match tag {
        UTC_TIME if text.len() == 12 => {
            let yy: i32 = text[..2].parse().ok()?;
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, &text[2..])
        }
        GENERALIZED_TIME if text.len() == 14 => (text[..4].parse().ok()?, &text[4..]),
        _ => return None,
    };
    let field = |i: usize| rest.get(i..i + 2)?.parse::<u32>().ok();
    let date = chrono::NaiveDate::from_ymd_opt(year, field(0)?, field(2)?)?;
    let time = date.and_hms_opt(field(4)?, field(6)?, field(8)?)?;
    Some(time.and_utc().timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cert_expiring(at: time::OffsetDateTime) -> Vec<u8> {
        let mut params = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap();
        params.not_after = at;
        let key = rcgen::KeyPair::generate().unwrap();
        params.self_signed(&key).unwrap().der().to_vec()
    }

    #[test]
    fn reads_not_after_as_utc_time_and_as_generalized_time() {
        // RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050 on.
        for unix in [1_900_000_000_i64, 2_900_000_000] {
            let at = time::OffsetDateTime::from_unix_timestamp(unix).unwrap();
            assert_eq!(not_after(&cert_expiring(at)), Some(unix), "{at}");
        }
    }

    #[test]
    fn garbage_and_truncated_certificates_have_no_expiry() {
        let der = cert_expiring(time::OffsetDateTime::from_unix_timestamp(1_900_000_000).unwrap());
        assert_eq!(not_after(b"not a certificate"), None);
        for cut in [0, 1, 10, der.len() / 2] {
            assert_eq!(not_after(&der[..cut]), None, "cut at {cut}");
        }
    }

    #[test]
    fn the_gauge_keeps_its_value_when_a_certificate_cannot_be_read() {
        let expiry = CertificateExpiry::default();
        expiry.observe(&cert_expiring(
            time::OffsetDateTime::from_unix_timestamp(1_900_000_000).unwrap(),
        ));
        assert_eq!(expiry.get(), 1_900_000_000);
        expiry.observe(b"junk");
        assert_eq!(expiry.get(), 1_900_000_000);
    }
}
