# sharenote's edge: Varnish 7 with the xkey vmod (varnish-modules) in front of the
# ingress (docs/deployment.md "The edge"). Public reads (a site's pages among them) are
# kept as long as their Surrogate-Control says (SHARE_EDGE_MAX_AGE, cut to the note's
# expiry) and dropped by the PURGE requests that the service sends for every change
# (SHARE_EDGE_PURGE_URLS names this edge). Everything else passes through.
vcl 4.1;

import blob;
import std;
import xkey;

# The origin: the ingress (or a sharenote process). Point it at yours.
backend default {
    .host = "127.0.0.1";
    .port = "8080";
}

# Who may purge: the origin's addresses (the pods of the publish and notes targets, which
# send the purges). Everyone else's PURGE is refused.
acl purgers {
    "127.0.0.1";
}

sub vcl_recv {
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(403, "Forbidden"));
        }
        if (req.http.Purge-All) {
            # The service's backlog or an outage passed its bound: everything, once.
            ban("obj.status != 0");
            return (synth(200, "Purged everything"));
        }
        # Hard: unshared or expiring notes, hidden properties and a hidden author are
        # never served again, neither in their own reads nor in the pages that embed or
        # link to them.
        if (req.http.xkey-purge) {
            set req.http.n-hard = xkey.purge(req.http.xkey-purge);
        }
        # Soft: the old read may be served within its grace while the new one is fetched.
        if (req.http.xkey-softpurge) {
            set req.http.n-soft = xkey.softpurge(req.http.xkey-softpurge);
        }
        return (synth(200, "Purged"));
    }
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    # A site's pages, /@<handle>/… and /@<handle> (its 301 to /@<handle>/), are public
    # reads like a note's page. Their path is left exactly as the reader sent it, never
    # normalised: the service reads it escaped, where "+" (a space), "%2B" (a "+") and
    # "%2D" (a folder named "-", not the site's own views under "-") are different names,
    # so it is the origin's to answer for each spelling. Of the query string only search
    # (q) and paging (cursor) mean anything there; every other parameter is dropped, so
    # that ?utm_source=x is a hit and reaches the origin without it.
    if (req.url ~ "^/@[^/?]") {
        call keep_site_query;
        unset req.http.Cookie;
        unset req.http.Authorization;
        return (hash);
    }
    call normalise_path;
    # The public reads: note JSON, page, social preview, images, assets. The service
    # ignores their query strings, so the edge does too (?x=random is a hit).
    if (req.url ~ "^/(s/[^/?]+|api/notes/[^/?]+|api/og/[^/?]+|api/images/[^/?]+/[^/?]+/[^?]+|assets/[^?]+)(\?.*)?$") {
        set req.url = regsub(req.url, "\?.*$", "");
        unset req.http.Cookie;
        unset req.http.Authorization;
        return (hash);
    }
    return (pass);
}

# The query string of a site's page without its parameters other than q and cursor (a
# name written exactly so, with or without a value), in their order; no "?" when none is
# left. The path is not touched.
sub keep_site_query {
    if (req.url !~ "\?") {
        return;
    }
    set req.http.sn-query = "&" + regsub(req.url, "^[^?]*\?", "");
    set req.http.sn-query = regsuball(req.http.sn-query, "&(?!(q|cursor)(=|&|$))[^&]*", "");
    set req.url = regsub(req.url, "\?.*$", "") + regsub(req.http.sn-query, "^&", "?");
    unset req.http.sn-query;
}

# One resource, one object: spellings of a path that differ only in percent-escapes of
# unreserved characters (RFC 3986: A-Z a-z 0-9 - . _ ~, in either hex case) are one path,
# so /s/%64… is /s/d…, and /api/images/%61…/big.png one image, not one object each
# (a site's paths excepted: vcl_recv keeps them as they came).
# Those escapes are decoded; every other escape is kept (%2B, %2F and %20 mean what site
# URLs say with them, and %25 is never decoded twice), its hex in upper case, so that
# %2b and %2B are one object too. A path with a '%' that starts no escape is left as it
# is (the service refuses it): decoding next to it could make a new escape. The query
# string is not touched.
sub normalise_path {
    set req.http.sn-path = regsub(req.url, "\?.*$", "");
    if (req.http.sn-path !~ "%" || req.http.sn-path ~ "%(?![0-9A-Fa-f]{2})") {
        unset req.http.sn-path;
        return;
    }
    # The hex digits of every escape in upper case.
    set req.http.sn-path = regsuball(req.http.sn-path, "%a([0-9A-Fa-f])", "%A\1");
    set req.http.sn-path = regsuball(req.http.sn-path, "%b([0-9A-Fa-f])", "%B\1");
    set req.http.sn-path = regsuball(req.http.sn-path, "%c([0-9A-Fa-f])", "%C\1");
    set req.http.sn-path = regsuball(req.http.sn-path, "%d([0-9A-Fa-f])", "%D\1");
    set req.http.sn-path = regsuball(req.http.sn-path, "%e([0-9A-Fa-f])", "%E\1");
    set req.http.sn-path = regsuball(req.http.sn-path, "%f([0-9A-Fa-f])", "%F\1");
    set req.http.sn-path = regsuball(req.http.sn-path, "%([0-9A-F])a", "%\1A");
    set req.http.sn-path = regsuball(req.http.sn-path, "%([0-9A-F])b", "%\1B");
    set req.http.sn-path = regsuball(req.http.sn-path, "%([0-9A-F])c", "%\1C");
    set req.http.sn-path = regsuball(req.http.sn-path, "%([0-9A-F])d", "%\1D");
    set req.http.sn-path = regsuball(req.http.sn-path, "%([0-9A-F])e", "%\1E");
    set req.http.sn-path = regsuball(req.http.sn-path, "%([0-9A-F])f", "%\1F");
    # The '%' of every escape but those of unreserved characters escaped once more
    # (%2B becomes %252B), so that decoding every escape below gives back the kept ones
    # as they were and decodes only the unreserved.
    set req.http.sn-path = regsuball(req.http.sn-path, "%(?!3[0-9]|4[1-9A-F]|5[0-9AF]|6[1-9A-F]|7[0-9AE]|2[DE])", "%25");
    set req.http.sn-path = blob.transcode(decoding=URL, encoding=IDENTITY, encoded=req.http.sn-path);
    set req.url = req.http.sn-path + regsub(req.url, "^[^?]*", "");
    unset req.http.sn-path;
}

sub vcl_backend_response {
    if (bereq.uncacheable) {
        return (deliver);
    }
    # xkey indexes the object by the keys in its xkey header.
    if (beresp.http.Surrogate-Key) {
        set beresp.http.xkey = beresp.http.Surrogate-Key;
        unset beresp.http.Surrogate-Key;
    }
    if (beresp.status == 404) {
        # Unknown, expired or unshared: briefly, so that random URLs cost the origin
        # little and a note made active again is seen soon (its key purges it at once).
        set beresp.ttl = 5s;
        set beresp.grace = 0s;
    } elsif (beresp.status != 200 && beresp.status != 206 && beresp.status != 301) {
        # Nothing else is kept. A 301 (a site's address in another case, or without its
        # "/") is, as a read is: for its Surrogate-Control, else for its Cache-Control.
        set beresp.ttl = 0s;
        set beresp.uncacheable = true;
    } elsif (beresp.http.Surrogate-Control ~ "max-age=[0-9]+") {
        set beresp.ttl = std.duration(regsub(beresp.http.Surrogate-Control, "^.*max-age=([0-9]+).*$", "\1s"), 0s);
        # A grace only where the origin gives one: never for a read whose lifetime an
        # expiry cut, so that an expired note is never served stale.
        set beresp.grace = 0s;
        if (beresp.http.Surrogate-Control ~ "stale-while-revalidate=[0-9]+") {
            set beresp.grace = std.duration(regsub(beresp.http.Surrogate-Control, "^.*stale-while-revalidate=([0-9]+).*$", "\1s"), 0s);
        }
    } else {
        # No edge lifetime (SHARE_EDGE_PURGE_URLS unset): the browser's at most 60 s.
        set beresp.grace = 0s;
    }
    unset beresp.http.Surrogate-Control;
    return (deliver);
}

sub vcl_deliver {
    # The Surrogate-* headers are for the edge only.
    unset resp.http.xkey;
    unset resp.http.Surrogate-Key;
    unset resp.http.Surrogate-Control;
    # The browser's Cache-Control (≤ 60 s) counts from when it gets the read.
    unset resp.http.Age;
    if (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
}
