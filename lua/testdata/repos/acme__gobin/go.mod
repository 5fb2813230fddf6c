module github.com/acme/gobin/v2

go 1.22
