package config_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/config"
)

func TestRedactMasksEveryCredential(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"a Postgres sslpassword is masked, the other parameters kept in order",
			"postgres://app@db/sharenote?sslmode=verify-full&sslpassword=s3cret&sslkey=/k.pem",
			"postgres://app@db/sharenote?sslmode=verify-full&sslpassword=xxxxx&sslkey=/k.pem"},
		{"a password parameter and a userinfo password are both masked",
			"postgresql://app:s3cret@db/sharenote?password=s3cret", "postgresql://app:xxxxx@db/sharenote?password=xxxxx"},
		{"a sensitive parameter's name is read case-insensitively and unescaped",
			"postgres://app@db/sharenote?SSLPassword=s3cret&ssl%70assword=s3cret", "postgres://app@db/sharenote?SSLPassword=xxxxx&ssl%70assword=xxxxx"},
		{"an object store URL's userinfo secret is masked",
			"s3://AKIAEXAMPLE:s3cret@media?endpoint=minio:9000&tls=false", "s3://AKIAEXAMPLE:xxxxx@media?endpoint=minio:9000&tls=false"},
		{"an object store URL's secret key parameter is masked",
			"s3://media?endpoint=minio:9000&secret_access_key=s3cret&session-token=s3cret", "s3://media?endpoint=minio:9000&secret_access_key=xxxxx&session-token=xxxxx"},
		{"an edge purge URL's password and token are masked",
			"http://purger:s3cret@varnish:6081/?token=s3cret", "http://purger:xxxxx@varnish:6081/?token=xxxxx"},
		{"a TLS redis URL's password is masked", "rediss://default:s3cret@redis:6380/0", "rediss://default:xxxxx@redis:6380/0"},
		{"a key=value DSN's password is masked",
			"host=db user=app password=s3cret dbname=sharenote sslmode=require", "host=db user=app password=xxxxx dbname=sharenote sslmode=require"},
		{"a key=value DSN's quoted password and sslpassword are masked",
			`host=db password = 'my s3cret \' x' sslpassword=s3cret dbname=sharenote`, "host=db password = xxxxx sslpassword=xxxxx dbname=sharenote"},
		{"a key=value DSN's password with an escaped space is masked",
			`host=db password=my\ s3cret dbname=sharenote`, "host=db password=xxxxx dbname=sharenote"},
		{"a key=value DSN that does not parse is hidden entirely", `host=db password='s3cret`, "xxxxx"},
		{"a URL without a credential is unchanged", "http://varnish:6081", "http://varnish:6081"},
		{"an object store URL without a credential is unchanged", "s3://media?endpoint=minio:9000&region=us-east-1", "s3://media?endpoint=minio:9000&region=us-east-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := config.Redact(tc.in); got != tc.want {
				t.Fatalf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// urlSettings set every URL setting with credentials, each containing "s3cret".
var urlSettings = map[string]string{
	"SHARE_DATABASE_URL":    "postgres://app:Pg-s3cret@db/sharenote?sslmode=verify-full&sslpassword=Key-s3cret",
	"SHARE_REDIS_URL":       "rediss://default:Rd-s3cret@redis:6380/0",
	"SHARE_BLOB_URL":        "s3://AKIAEXAMPLE:Aws-s3cret@media?endpoint=minio:9000&secret_access_key=Sk-s3cret",
	"SHARE_EDGE_PURGE_URLS": "http://purger:Edge-s3cret@varnish-a:6081,http://varnish-b:6081/?token=Tok-s3cret",
	"SHARE_EDGE_ADDRESSES":  "10.0.9.0/24",
}

func TestStartLineRedactsEveryURLSetting(t *testing.T) {
	c := load(t, urlSettings)
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("serving", "config", c)
	if strings.Contains(buf.String(), "s3cret") {
		t.Fatalf("the logged configuration shows a credential:\n%s", buf.String())
	}
	for _, want := range []string{
		`"database_url":"postgres://app:xxxxx@db/sharenote?sslmode=verify-full&sslpassword=xxxxx"`,
		`"blob_url":"s3://AKIAEXAMPLE:xxxxx@media?endpoint=minio:9000&secret_access_key=xxxxx"`,
		`"edge_purge_urls":["http://purger:xxxxx@varnish-a:6081","http://varnish-b:6081/?token=xxxxx"]`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the logged configuration lacks %s:\n%s", want, buf.String())
		}
	}
}

func TestInspectRedactsEveryURLSetting(t *testing.T) {
	bad := map[string]string{"SHARE_EDGE_PURGE_URLS": "http://purger:Edge-s3cret@varnish-a:6081,varnish-b:6081?token=Tok-s3cret"}
	for _, vars := range []map[string]string{urlSettings, bad} {
		for _, v := range config.Inspect(env(vars)) {
			if strings.Contains(v.Shown, "s3cret") || (v.Err != nil && strings.Contains(v.Err.Error(), "s3cret")) {
				t.Errorf("%s shows a credential: %q, %v", v.Setting.Name, v.Shown, v.Err)
			}
		}
	}
}
