require_relative 'fmt'
