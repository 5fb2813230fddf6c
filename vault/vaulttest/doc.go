// Package vaulttest opens throwaway vaults for the tests of the packages
// built on vault.
//
// It imports vault and nothing else of tai.
package vaulttest
