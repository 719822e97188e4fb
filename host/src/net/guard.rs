//! Which addresses an outbound request may reach: GoClaw's SSRF rule. A
//! hook's URL is configuration, but the address its name resolves to is
//! not, so every resolved address is checked here before a connection is
//! opened to it ([`super::connect`]).
//!
//! Loopback, private and link-local ranges are refused unless the policy
//! allows them; unspecified, multicast, broadcast and reserved addresses
//! are always refused (no HTTP server is reached there on purpose). An
//! IPv6 address that carries an IPv4 one (mapped `::ffff:a.b.c.d`,
//! compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`) is judged by the IPv4
//! address it carries, so `::ffff:127.0.0.1` is loopback.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Which non-public ranges a client may connect to. The default refuses
/// them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Policy {
    /// 127.0.0.0/8 and ::1.
    pub(crate) allow_loopback: bool,
    /// RFC 1918, 100.64.0.0/10 (CGNAT), fc00::/7 and the old fec0::/10.
    pub(crate) allow_private: bool,
    /// 169.254.0.0/16 (cloud metadata lives there) and fe80::/10.
    pub(crate) allow_link_local: bool,
}

/// A class of address that is not public.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Range {
    Loopback,
    Private,
    LinkLocal,
    Unspecified,
    Multicast,
    Broadcast,
    Reserved,
}

impl Range {
    /// The config key that allows it, if any does.
    fn allowance(self) -> Option<&'static str> {
        match self {
            Range::Loopback => Some("allow_loopback"),
            Range::Private => Some("allow_private"),
            Range::LinkLocal => Some("allow_link_local"),
            Range::Unspecified | Range::Multicast | Range::Broadcast | Range::Reserved => None,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Range::Loopback => "a loopback address",
            Range::Private => "a private address",
            Range::LinkLocal => "a link-local address",
            Range::Unspecified => "the unspecified address",
            Range::Multicast => "a multicast address",
            Range::Broadcast => "the broadcast address",
            Range::Reserved => "a reserved address",
        }
    }
}

/// An address the policy refuses, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) addr: IpAddr,
    pub(crate) range: Range,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is {}", self.addr, self.range.describe())?;
        match self.range.allowance() {
            Some(key) => write!(f, " (`{key} = true` allows it)"),
            None => write!(f, " (never allowed)"),
        }
    }
}

impl Policy {
    /// Every allowance on: only unspecified, multicast, broadcast and
    /// reserved addresses are refused. For the `url` command hooks
    /// imported from Claude Code, which does not block local targets.
    pub(crate) const LOCAL_OK: Policy = Policy {
        allow_loopback: true,
        allow_private: true,
        allow_link_local: true,
    };

    /// Whether `ip` may be connected to.
    pub(crate) fn check(&self, ip: IpAddr) -> Result<(), Refused> {
        let Some(range) = classify(ip) else {
            return Ok(());
        };
        let allowed = match range {
            Range::Loopback => self.allow_loopback,
            Range::Private => self.allow_private,
            Range::LinkLocal => self.allow_link_local,
            _ => false,
        };
        match allowed {
            true => Ok(()),
            false => Err(Refused { addr: ip, range }),
        }
    }
}

/// The non-public range `ip` is in; `None` for a public address.
pub(crate) fn classify(ip: IpAddr) -> Option<Range> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<Range> {
    let [a, b, ..] = ip.octets();
    Some(match (a, b) {
        _ if ip.is_broadcast() => Range::Broadcast,
        (0, _) => Range::Unspecified,
        (127, _) => Range::Loopback,
        (10, _) | (192, 168) => Range::Private,
        (172, 16..=31) => Range::Private,
        (100, 64..=127) => Range::Private,
        (169, 254) => Range::LinkLocal,
        (224..=239, _) => Range::Multicast,
        (240..=255, _) => Range::Reserved,
        _ => return None,
    })
}

fn classify_v6(ip: Ipv6Addr) -> Option<Range> {
    if ip.is_unspecified() {
        return Some(Range::Unspecified);
    }
    if ip.is_loopback() {
        return Some(Range::Loopback);
    }
    if let Some(v4) = embedded_v4(ip) {
        return classify_v4(v4);
    }
    let first = ip.segments()[0];
    Some(match first {
        _ if first & 0xfe00 == 0xfc00 => Range::Private,
        _ if first & 0xffc0 == 0xfec0 => Range::Private,
        _ if first & 0xffc0 == 0xfe80 => Range::LinkLocal,
        _ if first & 0xff00 == 0xff00 => Range::Multicast,
        _ => return None,
    })
}

/// The IPv4 address an IPv6 one carries: mapped (`::ffff:0:0/96`),
/// compatible (`::/96`, deprecated but still routed by some stacks) or
/// the well-known NAT64 prefix (`64:ff9b::/96`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let low = Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
    match s[..6] {
        [0, 0, 0, 0, 0, 0] => Some(low),
        [0x64, 0xff9b, 0, 0, 0, 0] => Some(low),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(addr: &str) -> Option<Range> {
        classify(addr.parse().expect("a test address"))
    }

    /// From GoClaw's agent hooks (seeds/goclaw-agent-hooks.txt, "SSRF
    /// protection ... blocks loopback/link-local/private ranges"): every
    /// range of the rule, on both families, with the IPv6 forms of IPv4.
    #[test]
    fn each_address_is_in_its_range() {
        use Range::*;
        let table = [
            ("127.0.0.1", Some(Loopback)),
            ("127.255.0.9", Some(Loopback)),
            ("::1", Some(Loopback)),
            ("10.1.2.3", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("172.32.0.1", None),
            ("192.168.1.1", Some(Private)),
            ("100.64.0.1", Some(Private)),
            ("100.127.255.255", Some(Private)),
            ("100.128.0.1", None),
            ("fd12:3456::1", Some(Private)),
            ("fc00::1", Some(Private)),
            ("169.254.169.254", Some(LinkLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(Unspecified)),
            ("::", Some(Unspecified)),
            ("224.0.0.1", Some(Multicast)),
            ("ff02::1", Some(Multicast)),
            ("255.255.255.255", Some(Broadcast)),
            ("240.0.0.1", Some(Reserved)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:10.0.0.1", Some(Private)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("::127.0.0.1", Some(Loopback)),
            ("::ffff:0.0.0.0", Some(Unspecified)),
            ("64:ff9b::192.168.0.1", Some(Private)),
            ("64:ff9b::8.8.8.8", None),
            ("::ffff:8.8.8.8", None),
            ("8.8.8.8", None),
            ("1.1.1.1", None),
            ("2606:4700:4700::1111", None),
            ("2001:db8::1", None),
        ];
        for (addr, want) in table {
            assert_eq!(range(addr), want, "{addr}");
        }
    }

    #[test]
    fn each_allowance_opens_its_range_only() {
        let ip = |s: &str| s.parse::<IpAddr>().expect("a test address");
        let strict = Policy::default();
        for a in ["127.0.0.1", "10.0.0.1", "169.254.1.1", "::ffff:127.0.0.1"] {
            assert!(strict.check(ip(a)).is_err(), "{a}");
        }
        assert_eq!(strict.check(ip("93.184.216.34")), Ok(()));
        let loopback = Policy {
            allow_loopback: true,
            ..Policy::default()
        };
        assert_eq!(loopback.check(ip("127.0.0.1")), Ok(()));
        assert_eq!(loopback.check(ip("::1")), Ok(()));
        assert!(loopback.check(ip("10.0.0.1")).is_err());
        assert!(loopback.check(ip("169.254.169.254")).is_err());
        for never in ["0.0.0.0", "::", "224.0.0.1", "255.255.255.255"] {
            assert!(Policy::LOCAL_OK.check(ip(never)).is_err(), "{never}");
        }
        assert_eq!(Policy::LOCAL_OK.check(ip("192.168.0.1")), Ok(()));
    }

    #[test]
    fn a_refusal_names_the_address_and_the_key_that_allows_it() {
        let refused = Policy::default()
            .check("127.0.0.1".parse().expect("a test address"))
            .expect_err("loopback is refused");
        let text = refused.to_string();
        assert!(
            text.contains("127.0.0.1") && text.contains("allow_loopback"),
            "{text}"
        );
        let never = Policy::LOCAL_OK
            .check("0.0.0.0".parse().expect("a test address"))
            .expect_err("unspecified is refused");
        assert!(never.to_string().contains("never allowed"), "{never}");
    }
}
