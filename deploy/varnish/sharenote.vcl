# sharenote's edge: Varnish 7 with the xkey vmod (varnish-modules) in front of the
# ingress (docs/deployment.md "The edge"). Public reads are kept as long as their
# Surrogate-Control says (SHARE_EDGE_MAX_AGE, cut to the note's expiry) and dropped by the
# PURGE requests that the service sends for every change (SHARE_EDGE_PURGE_URLS names
# this edge). Everything else passes through.
vcl 4.1;

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
        # Hard: unshared notes and moved expiries are never served again.
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
    } elsif (beresp.status != 200 && beresp.status != 206) {
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
